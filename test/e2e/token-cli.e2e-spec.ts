import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_SCOPES } from '../../src/app.scopes.js';
import { runTokenCommand, UsageError } from '../../src/auth/cli/token-commands.js';
import { TokenRequestError } from '../../src/auth/token-request.error.js';
import { TokensService } from '../../src/auth/tokens.service.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

describe('the token commands', () => {
  let api: TestApp;
  let tokens: TokensService;

  const run = async (...argv: string[]) => {
    const captured = { out: '', err: '' };
    const code = await runTokenCommand(argv, tokens, {
      out: (text) => (captured.out += text),
      err: (text) => (captured.err += text),
    });
    return { code, ...captured };
  };

  const createPlant = (token: string, id: number) =>
    api.request({
      method: 'POST',
      url: '/plants',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ id, name: 'Orchid' }),
    });

  beforeAll(async () => {
    api = await createTestApp();
    tokens = api.app.get(TokensService);
  });
  afterAll(() => api.close());

  it('create prints only the new token, which then authenticates', async () => {
    const { code, out, err } = await run('create', '--name', 'deploy-bot');
    expect(code).toBe(0);
    expect(err).toBe('');
    expect(out).toMatch(/^pst_[A-Za-z0-9_-]{43}\n$/);
    expect((await createPlant(out.trim(), 1)).statusCode).toBe(200);
  });

  it('never stores the raw token: only its SHA-256 is in the database', async () => {
    const { out } = await run('create', '--name', 'hash-check');
    const secret = out.trim();
    const rows = await api.database.query<{ row: string }>(
      'SELECT row_to_json(t)::text AS row FROM api_tokens t',
    );
    expect(rows.length).toBeGreaterThan(0);
    for (const { row } of rows) expect(row).not.toContain(secret.slice(4));
    const [{ secret_hash }] = await api.database.query<{ secret_hash: string }>(
      "SELECT secret_hash FROM api_tokens WHERE name = 'hash-check'",
    );
    expect(secret_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('never shows the secret in list', async () => {
    const { out: secret } = await run(
      'create',
      '--name',
      'listed',
      '--scopes',
      'plants:read',
      '--expires-in',
      '12h',
    );
    const { code, out } = await run('list');
    expect(code).toBe(0);
    expect(out).not.toContain(secret.trim().slice(4));
    const line = out.split('\n').find((row) => row.includes(' listed '))!;
    expect(line).toMatch(/plants:read\s+\d{4}-\d\d-\d\dT[\d:.]+Z\s+never\s+active$/);
    expect(out.split('\n')[0]).toMatch(/^ID\s+NAME\s+SCOPES\s+EXPIRES\s+LAST USED\s+STATUS$/);
  });

  it('list --json reports last use and status', async () => {
    const { out: secret } = await run('create', '--name', 'used-once');
    await createPlant(secret.trim(), 2);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const listed = JSON.parse((await run('list', '--json')).out) as Array<Record<string, unknown>>;
    const used = listed.find((token) => token.name === 'used-once')!;
    expect(used).toMatchObject({ status: 'active', scopes: ['plants:read', 'plants:write'] });
    expect(used.lastUsedAt).toEqual(expect.stringMatching(/^\d{4}-/));
  });

  it('revoke stops the token at once, and its name can be reused', async () => {
    const { out: secret } = await run('create', '--name', 'short-lived');
    expect(await run('revoke', 'short-lived')).toEqual({
      code: 0,
      out: '',
      err: 'revoked token "short-lived"\n',
    });
    expect((await createPlant(secret.trim(), 3)).statusCode).toBe(401);
    expect((await run('revoke', 'short-lived')).code).toBe(1);
    expect((await run('create', '--name', 'short-lived')).code).toBe(0);
  });

  it('grants webhooks:manage when asked, never by default', async () => {
    await run('create', '--name', 'plants-only');
    await run('create', '--name', 'hook-admin', '--scopes', 'webhooks:manage');
    const listed = JSON.parse((await run('list', '--json')).out) as Array<Record<string, unknown>>;
    const scopesOf = (name: string) => listed.find((token) => token.name === name)?.scopes;
    expect(scopesOf('plants-only')).toEqual(['plants:read', 'plants:write']);
    expect(scopesOf('hook-admin')).toEqual(['webhooks:manage']);
  });

  it('names every scope the modules declare when refusing an unknown one', async () => {
    await expect(run('create', '--name', 'x', '--scopes', 'plants:admin')).rejects.toThrow(
      `use one or more of ${APP_SCOPES.all.join(', ')}`,
    );
  });

  it('refuses a second live token with the same name', async () => {
    await run('create', '--name', 'twin');
    await expect(run('create', '--name', 'twin')).rejects.toThrow(TokenRequestError);
  });

  it('create --replace revokes the live token of that name and issues a new one', async () => {
    const { out: first } = await run('create', '--name', 'rotated', '--replace');
    expect((await createPlant(first.trim(), 4)).statusCode).toBe(200);
    const second = await run('create', '--name', 'rotated', '--replace');
    expect(second).toEqual({ code: 0, out: expect.stringMatching(/^pst_\S{43}\n$/), err: '' });
    expect((await createPlant(first.trim(), 5)).statusCode).toBe(401);
    expect((await createPlant(second.out.trim(), 5)).statusCode).toBe(200);
    const rotated = (
      JSON.parse((await run('list', '--json')).out) as Array<Record<string, unknown>>
    )
      .filter((token) => token.name === 'rotated')
      .map((token) => token.status);
    expect(rotated).toEqual(['revoked', 'active']);
  });

  it('create --replace keeps the live token when the new one is refused', async () => {
    const { out: kept } = await run('create', '--name', 'kept');
    await expect(
      run('create', '--name', 'kept', '--scopes', 'plants:admin', '--replace'),
    ).rejects.toThrow(TokenRequestError);
    expect((await createPlant(kept.trim(), 6)).statusCode).toBe(200);
  });

  it.each([
    [['create'], UsageError],
    [['create', '--name', 'x', '--bogus'], UsageError],
    [['frobnicate'], UsageError],
    [['revoke'], UsageError],
    [['create', '--name', 'bad name'], TokenRequestError],
    [['create', '--name', 'x', '--scopes', 'plants:admin'], TokenRequestError],
    [['create', '--name', 'x', '--expires-in', '5y'], TokenRequestError],
  ])('refuses %j with a clear error', async (argv, type) => {
    await expect(run(...argv)).rejects.toThrow(type);
  });
});
