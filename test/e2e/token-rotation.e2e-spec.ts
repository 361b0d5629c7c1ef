import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Test } from '@nestjs/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../src/audit/actor.js';
import { runTokenCommand } from '../../src/auth/cli/token-commands.js';
import { TokensService } from '../../src/auth/tokens.service.js';
import { VerifiedTokenCache } from '../../src/auth/verified-token-cache.js';
import { TokenCliModule } from '../../src/cli/token-cli.module.js';
import { AppConfig } from '../../src/config/app-config.js';
import { runTokenCli, send, type ServiceProcess, startService } from '../support/built-service.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import {
  onDatabaseServerRun,
  createTestDatabase,
  type TestDatabase,
} from '../support/test-database.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Far longer than the tests: a cached token is never looked up again unless evicted. */
const ONE_HOUR_MS = 3_600_000;
/** Bounds the waits for a change to reach the service; a test fails, rather than hangs. */
const MAX_POLLS = 1_000;

/**
 * `token rotate` as an operator uses it: the built token CLI beside the built service, on
 * the database the tests run on (the embedded one in DATA_DIR, or DATABASE_URL's server).
 */
describe('npm run --silent token -- rotate, beside the running service', () => {
  let workDir: string;
  let database: TestDatabase | undefined;
  let env: Record<string, string>;
  let service: ServiceProcess;
  let url: string;

  const request = (token: string, method: 'GET' | 'POST') =>
    send(`${url}/plants`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: method === 'POST' ? JSON.stringify({ id: Date.now(), name: 'Rotated' }) : undefined,
    });
  const status = async (token: string, method: 'GET' | 'POST' = 'GET') =>
    (await request(token, method)).status;
  const listed = async (name: string) =>
    (
      JSON.parse((await runTokenCli(['list', '--json'], env)).stdout) as Array<{
        name: string;
        scopes: string[];
        expiresAt: string | null;
        status: string;
      }>
    ).filter((token) => token.name === name);

  beforeAll(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'plant-store-rotate-'));
    database = onDatabaseServerRun ? await createTestDatabase() : undefined;
    env = database ? { ...database.env } : { DATA_DIR: join(workDir, 'data') };
    ({ service, url } = await startService({ ...env, RATE_LIMIT_PER_MINUTE: '0' }));
  });
  afterAll(async () => {
    await service?.stop();
    await database?.drop();
    await rm(workDir, { recursive: true, force: true });
  });

  it(
    'prints a new token with the same scopes; both work during the overlap, the old one is 401 after it',
    { timeout: 120_000 },
    async () => {
      const old = (
        await runTokenCli(['create', '--name', 'reader', '--scopes', 'plants:read'], env)
      ).stdout.trim();
      // The service now holds the old token in its cache.
      expect(await status(old)).toBe(200);

      const rotated = await runTokenCli(['rotate', '--name', 'reader', '--overlap', '20s'], env);
      expect(rotated.code).toBe(0);
      expect(rotated.stdout).toMatch(/^pst_[A-Za-z0-9_-]{43}\n$/);
      const fresh = rotated.stdout.trim();
      const [, overlapEnd] = /^the old token "reader" works until (\S+Z)$/m.exec(rotated.stderr)!;

      // During the overlap: both authenticate, with the same scopes (read, not write).
      expect(Date.now()).toBeLessThan(Date.parse(overlapEnd));
      expect([await status(old), await status(fresh)]).toEqual([200, 200]);
      expect([await status(old, 'POST'), await status(fresh, 'POST')]).toEqual([403, 403]);
      expect(await listed('reader')).toEqual([
        expect.objectContaining({
          scopes: ['plants:read'],
          expiresAt: overlapEnd,
          status: 'rotating',
        }),
        expect.objectContaining({ scopes: ['plants:read'], expiresAt: null, status: 'active' }),
      ]);

      // After it: the old token is refused as a revoked one is, never before its end.
      let refusedAt = 0;
      for (let poll = 0; poll < MAX_POLLS && !refusedAt; poll++) {
        if ((await status(old)) === 401) refusedAt = Date.now();
        else await sleep(100);
      }
      expect(refusedAt).toBeGreaterThanOrEqual(Date.parse(overlapEnd));
      const revoked = (await runTokenCli(['create', '--name', 'revoked'], env)).stdout.trim();
      expect((await runTokenCli(['revoke', 'revoked'], env)).code).toBe(0);
      const [answer, revokedAnswer] = [await request(old, 'GET'), await request(revoked, 'GET')];
      expect(answer.status).toBe(401);
      expect(answer.body).toBe(revokedAnswer.body);
      expect(answer.headers['www-authenticate']).toBe(revokedAnswer.headers['www-authenticate']);
      expect(await status(fresh)).toBe(200);
      expect((await listed('reader')).map((token) => token.status)).toEqual(['rotated', 'active']);
    },
  );

  it('--overlap 0 refuses the old token at once, though the service had it cached', async () => {
    const old = (await runTokenCli(['create', '--name', 'leaked'], env)).stdout.trim();
    expect(await status(old)).toBe(200);
    const rotated = await runTokenCli(['rotate', '--name', 'leaked', '--overlap', '0'], env);
    expect(rotated.code).toBe(0);
    expect(await status(old)).toBe(401);
    expect(await status(rotated.stdout.trim())).toBe(200);
  });

  it('answers exit code 1 for a name with no live token, and 2 for a bad overlap', async () => {
    const missing = await runTokenCli(['rotate', '--name', 'nobody'], env);
    expect({ code: missing.code, stdout: missing.stdout }).toEqual({ code: 1, stdout: '' });
    expect(missing.stderr).toBe('no live token named "nobody"\n');
    const bad = await runTokenCli(['rotate', '--name', 'reader', '--overlap', '1 hour'], env);
    expect({ code: bad.code, stdout: bad.stdout }).toEqual({ code: 2, stdout: '' });
    expect(bad.stderr).toMatch(/^token: invalid overlap "1 hour": use 0, or seconds/);
    const negative = await runTokenCli(['rotate', '--name', 'reader', '--overlap', '-5s'], env);
    expect({ code: negative.code, stdout: negative.stdout }).toEqual({ code: 2, stdout: '' });
    expect(negative.stderr).toMatch(/^token: invalid overlap "-5s": use 0, or seconds/);
  }, 60_000);
});

/**
 * The rule every replica applies: a service that holds the old token in its cache (for an
 * hour here) refuses it once the overlap ends, because the overlap's end is the token's
 * expiry, checked at each request; the rotation itself is announced like a revocation.
 */
describe('a token rotated by another process (the token CLI)', () => {
  let api: TestApp;
  let cli: Awaited<ReturnType<typeof tokenCli>>;
  let nextId = 1;

  const createPlant = async (secret: string) =>
    (
      await api.request({
        method: 'POST',
        url: '/plants',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        payload: { id: nextId++, name: 'Fern' },
      })
    ).statusCode;
  const run = async (...argv: string[]) => {
    const captured = { out: '', err: '' };
    const code = await runTokenCommand(
      argv,
      cli.get(TokensService),
      { out: (text) => (captured.out += text), err: (text) => (captured.err += text) },
      cliActor(),
    );
    return { code, ...captured };
  };
  const listed = async (name: string) =>
    (JSON.parse((await run('list', '--json')).out) as Array<Record<string, unknown>>).filter(
      (token) => token.name === name,
    );

  async function tokenCli() {
    const module = await Test.createTestingModule({ imports: [TokenCliModule] })
      .overrideProvider(AppConfig)
      .useValue(AppConfig.fromEnvironment({ ...api.database.env, LOG_LEVEL: 'silent' }))
      .compile();
    await module.init();
    return module;
  }

  beforeAll(async () => {
    api = await createTestApp({}, (module) =>
      module
        .overrideProvider(VerifiedTokenCache)
        .useValue(new VerifiedTokenCache(ONE_HOUR_MS, 100)),
    );
    cli = await tokenCli();
  });
  afterAll(async () => {
    await cli?.close();
    await api?.close();
  });

  it('is accepted until the overlap ends, then refused, though cached for an hour', async () => {
    const old = await api.issueToken({ name: 'cached' });
    expect(await createPlant(old)).toBe(200);
    const rotated = await cli
      .get(TokensService)
      .rotate({ name: 'cached', overlapMs: 2_000 }, cliActor());
    expect(rotated).not.toBeNull();
    expect([await createPlant(old), await createPlant(rotated!.secret)]).toEqual([200, 200]);
    await sleep(rotated!.overlapEndsAt.getTime() - Date.now() + 10);
    expect(await createPlant(old)).toBe(401);
    expect(await createPlant(rotated!.secret)).toBe(200);
  });

  it('with no overlap is refused as soon as the announcement arrives', async () => {
    const old = await api.issueToken({ name: 'at-once' });
    expect(await createPlant(old)).toBe(200);
    expect((await run('rotate', '--name', 'at-once', '--overlap', '0')).code).toBe(0);
    let status = 200;
    for (let poll = 0; poll < MAX_POLLS && status === 200; poll++) {
      await sleep(5);
      status = await createPlant(old);
    }
    expect(status).toBe(401);
  });

  it("gives the new token the old one's lifetime, unless --expires-in says", async () => {
    await api.issueToken({ name: 'yearly', expiresInMs: 365 * 86_400_000 });
    expect((await run('rotate', '--name', 'yearly')).code).toBe(0);
    const [old, kept] = await listed('yearly');
    expect(old).toMatchObject({ status: 'rotating' });
    // The overlap (24 h by default) ends before the old token's own expiry.
    expect(Date.parse(old.expiresAt as string) - Date.now()).toBeLessThanOrEqual(86_400_000);
    expect(Date.parse(kept.expiresAt as string) - Date.now()).toBeGreaterThan(364 * 86_400_000);

    expect((await run('rotate', '--name', 'yearly', '--expires-in', '30m')).code).toBe(0);
    const newest = (await listed('yearly')).at(-1)!;
    expect(Date.parse(newest.expiresAt as string) - Date.now()).toBeLessThanOrEqual(1_800_000);
  });

  it('never lets the old token outlive its own expiry', async () => {
    await api.issueToken({ name: 'expiring', expiresInMs: 60_000 });
    const { err } = await run('rotate', '--name', 'expiring', '--overlap', '7d');
    const [old] = await listed('expiring');
    expect(Date.parse(old.expiresAt as string) - Date.now()).toBeLessThanOrEqual(60_000);
    expect(err).toContain(`works until ${old.expiresAt as string}`);
  });

  it('revoke during the overlap revokes both the new token and the old one', async () => {
    const old = await api.issueToken({ name: 'both' });
    const { out } = await run('rotate', '--name', 'both', '--overlap', '1h');
    expect((await run('revoke', 'both')).code).toBe(0);
    let statuses = [200, 200];
    for (let poll = 0; poll < MAX_POLLS && statuses.includes(200); poll++) {
      await sleep(5);
      statuses = [await createPlant(old), await createPlant(out.trim())];
    }
    expect(statuses).toEqual([401, 401]);
    expect((await listed('both')).map(({ status }) => status)).toEqual(['revoked', 'revoked']);
  });

  it('refuses to rotate a revoked, rotated or expired token: only the live one has the name', async () => {
    await api.issueToken({ name: 'gone' });
    await api.revokeToken('gone');
    await api.issueToken({ name: 'past', expiresInMs: -1_000 });
    for (const name of ['gone', 'past']) {
      expect(await run('rotate', '--name', name)).toEqual({
        code: 1,
        out: '',
        err: `no live token named "${name}"\n`,
      });
    }
  });
});
