import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTokenCli, send, type ServiceProcess, startService } from '../support/built-service.js';
import {
  onDatabaseServerRun,
  createTestDatabase,
  type TestDatabase,
} from '../support/test-database.js';

/**
 * The built token CLI next to the built service, on the database `npm test` runs on: the
 * embedded one in DATA_DIR, or a database of its own on DATABASE_URL's server.
 */
describe('npm run --silent token, as a process', () => {
  let workDir: string;
  let database: TestDatabase | undefined;
  let env: Record<string, string>;
  let service: ServiceProcess | undefined;
  let url: string;

  const createPlant = (token: string, id: number) =>
    send(`${url}/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id, name: 'Cli' }),
    });

  beforeAll(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'plant-store-cli-'));
    database = onDatabaseServerRun ? await createTestDatabase() : undefined;
    env = database ? { ...database.env } : { DATA_DIR: join(workDir, 'data') };
    ({ service, url } = await startService({ ...env, RATE_LIMIT_PER_MINUTE: '0' }));
  });
  afterAll(async () => {
    await service?.stop();
    await database?.drop();
    await rm(workDir, { recursive: true, force: true });
  });

  it('create prints the token and only the token while the service runs', async () => {
    const { code, stdout, stderr } = await runTokenCli(['create', '--name', 'cli'], env);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^pst_[A-Za-z0-9_-]{43}\n$/);
    // Standard error has the audit trail's line, and nothing else.
    expect(
      stderr
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toEqual([expect.objectContaining({ msg: 'audit event', event: 'token.created' })]);
    expect((await createPlant(stdout.trim(), 1)).status).toBe(200);
  });

  it.runIf(onDatabaseServerRun)(
    'create prints only the token when one role does everything: the role warning goes to standard error',
    async () => {
      // A deployment without DATABASE_MIGRATION_URL, its one role a superuser.
      const { code, stdout, stderr } = await runTokenCli(['create', '--name', 'one-role'], {
        DATABASE_URL: database!.adminUrl,
      });
      expect(code).toBe(0);
      expect(stdout).toMatch(/^pst_[A-Za-z0-9_-]{43}\n$/);
      expect(stderr).toMatch(/is a superuser: it could do anything to the database/);
      expect((await createPlant(stdout.trim(), 2)).status).toBe(200);
    },
  );

  it('revoke takes effect on the running service', async () => {
    const { stdout } = await runTokenCli(['create', '--name', 'to-revoke'], env);
    expect((await createPlant(stdout.trim(), 2)).status).toBe(200);
    expect((await runTokenCli(['revoke', 'to-revoke'], env)).code).toBe(0);
    expect((await createPlant(stdout.trim(), 3)).status).toBe(401);
  });

  it('create --replace runs twice in a row, as the quick start may, and only the last token works', async () => {
    const [first, second] = [
      await runTokenCli(['create', '--name', 'me', '--replace'], env),
      await runTokenCli(['create', '--name', 'me', '--replace'], env),
    ];
    expect([first.code, second.code]).toEqual([0, 0]);
    expect(second.stdout).toMatch(/^pst_[A-Za-z0-9_-]{43}\n$/);
    expect((await createPlant(first.stdout.trim(), 4)).status).toBe(401);
    expect((await createPlant(second.stdout.trim(), 4)).status).toBe(200);
  });

  it('answers a usage error with exit code 2 and the usage on stderr', async () => {
    const { code, stdout, stderr } = await runTokenCli(['create'], env);
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
    expect(stderr).toMatch(/^token: token create needs --name NAME\nUsage:/);
  });

  it("keeps the compiled code of the modules it loaded for the next command (Node's compile cache)", async () => {
    // Where Node.js keeps it by default: the temporary directory's node-compile-cache.
    const temporary = join(workDir, 'tmp');
    await mkdir(temporary);
    const { code } = await runTokenCli(['create'], { ...env, TMPDIR: temporary });
    expect(code).toBe(2);
    const cache = join(temporary, 'node-compile-cache');
    expect(existsSync(cache) ? readdirSync(cache, { recursive: true }).length : 0).toBeGreaterThan(
      0,
    );
  });

  it('works with the service stopped, and leaves no database server behind', async () => {
    service!.signal('SIGTERM');
    expect(await service!.exited).toEqual({ code: 0, signal: null });
    const { code, stdout } = await runTokenCli(['list'], env);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^ID\s+NAME/);
    expect(stdout).toMatch(/ cli\s.*active/);
    expect(stdout).toMatch(/ to-revoke\s.*revoked/);
    if (!onDatabaseServerRun)
      expect(existsSync(join(workDir, 'data', 'postgres', 'postmaster.pid'))).toBe(false);
  });
});
