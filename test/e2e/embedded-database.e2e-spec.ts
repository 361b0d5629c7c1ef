import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chown, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataSource } from 'typeorm';
import { TokensService } from '../../src/auth/tokens.service.js';
import { StartRefusedError } from '../../src/config/refuse-start.js';
import { WebhooksService } from '../../src/webhooks/webhooks.service.js';
import { AppConfig } from '../../src/config/app-config.js';
import { DatabaseServer } from '../../src/database/database-server.js';
import { EmbeddedPostgresServer } from '../../src/database/embedded-postgres.js';
import { loginEnvironment } from '../support/login-environment.js';
import { postmasterPid as postmasterOf } from '../support/embedded-server.js';
import { buildApp } from '../support/test-app.js';
import { cliActor } from '../../src/audit/actor.js';
import { describeOnEmbeddedRun } from '../support/test-database.js';

const quiet = { log: () => undefined };
const runningAsRoot = process.getuid?.() === 0;

describeOnEmbeddedRun(
  'without DATABASE_URL the service runs its own PostgreSQL in DATA_DIR',
  () => {
    let privateDir: string;
    let dataDir: string;
    const config = () => AppConfig.fromEnvironment({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    const postmasterPid = () => join(dataDir, 'postgres', 'postmaster.pid');
    const createPlant = (app: NestFastifyApplication, token: string, body: string) =>
      app.inject({
        method: 'POST',
        url: '/plants',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: body,
      });

    beforeAll(async () => {
      // A private parent (mode 0700, like a clone in `mktemp -d`) must not stop it.
      privateDir = await mkdtemp(join(tmpdir(), 'plant-store-embedded-'));
      dataDir = join(privateDir, 'data');
    });
    afterAll(() => rm(privateDir, { recursive: true, force: true }));

    it('initialises it on first start, keeps the data across restarts, and stops it on close', async () => {
      const first = await buildApp(config());
      const { secret } = await first
        .get(TokensService)
        .create({ name: 'embedded', scopes: ['plants:write'] }, cliActor());
      const created = await createPlant(first, secret, '{"id":9223372036854775807,"name":"Kept"}');
      expect(created.statusCode).toBe(200);
      expect(existsSync(postmasterPid())).toBe(true);
      await first.close();
      expect(existsSync(postmasterPid())).toBe(false);

      const second = await buildApp(config());
      const other = await createPlant(second, secret, '{"id":9223372036854775807,"name":"Other"}');
      expect(other.statusCode).toBe(409);
      const replay = await createPlant(second, secret, '{"id":9223372036854775807,"name":"Kept"}');
      expect(replay.statusCode).toBe(200);
      await second.close();
    });

    it('makes a webhook secret key of its own beside the data (0600), keeps it across restarts, and refuses to start with another', async () => {
      const withHooks = (env: Record<string, string> = {}) =>
        AppConfig.fromEnvironment({
          DATA_DIR: dataDir,
          LOG_LEVEL: 'silent',
          WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
          ...env,
        });
      const keyFile = join(dataDir, 'webhook-secret.key');
      const first = await buildApp(withHooks());
      const { subscription } = await first
        .get(WebhooksService)
        .create({ url: 'http://127.0.0.1:9/' }, cliActor());
      const [stored] = await first
        .get(DataSource)
        .query('SELECT secret, secret_encrypted FROM webhook_subscriptions WHERE id = $1', [
          subscription.id,
        ]);
      expect(stored).toEqual({
        secret: null,
        secret_encrypted: expect.stringMatching(/^v2:embedded:/),
      });
      await first.close();
      // The subscription stays, so that the later starts have a secret to check the key with.
      const key = readFileSync(keyFile, 'utf8');
      expect(key).toMatch(/^embedded:[A-Za-z0-9+/]{43}=\n$/);
      expect((await stat(keyFile)).mode & 0o777).toBe(0o600);

      await (await buildApp(withHooks())).close();
      expect(readFileSync(keyFile, 'utf8')).toBe(key);
      const otherKey = `embedded:${randomBytes(32).toString('base64')}`;
      await expect(buildApp(withHooks({ WEBHOOK_SECRET_KEYS: otherKey }))).rejects.toThrow(
        StartRefusedError,
      );
      const last = await buildApp(withHooks());
      await last.get(WebhooksService).delete(subscription.id, cliActor());
      await last.close();
    });

    it('lets another process (the token CLI) join the running server without stopping it', async () => {
      const owner = await buildApp(config());
      const guest = await DatabaseServer.connect(config());
      const client = new pg.Client({ connectionString: guest.url });
      await client.connect();
      await client.query("INSERT INTO plants (id, name) VALUES (1, 'From the guest')");
      await client.end();
      await guest.onApplicationShutdown();
      expect(existsSync(postmasterPid())).toBe(true);

      const { secret } = await owner
        .get(TokensService)
        .create({ name: 'owner', scopes: ['plants:write'] }, cliActor());
      const replay = await createPlant(owner, secret, '{"id":1,"name":"From the guest"}');
      expect(replay.statusCode).toBe(200);
      await owner.close();
      expect(existsSync(postmasterPid())).toBe(false);
    });

    it('is never stopped under the service by a process that started it first (the token CLI)', async () => {
      const cli = await DatabaseServer.connect(config());
      const service = await buildApp(config());
      await cli.onApplicationShutdown();
      expect(existsSync(postmasterPid())).toBe(true);

      const { secret } = await service
        .get(TokensService)
        .create({ name: 'after-the-cli', scopes: ['plants:write'] }, cliActor());
      expect(
        (await createPlant(service, secret, '{"id":2,"name":"Still served"}')).statusCode,
      ).toBe(200);
      await service.close();
      expect(existsSync(postmasterPid())).toBe(false);
    });

    it('is stopped by the last of several users to leave, whatever the order', async () => {
      const users = await Promise.all(
        [1, 2, 3].map(() => EmbeddedPostgresServer.open(dataDir, quiet)),
      );
      expect(new Set(users.map((user) => user.url)).size).toBe(1);
      await users[1].close();
      await users[0].close();
      expect(existsSync(postmasterPid())).toBe(true);
      await users[2].close();
      expect(existsSync(postmasterPid())).toBe(false);
    });
  },
);

describe('a first start killed during initdb', () => {
  it('leaves a DATA_DIR that the next start initialises and runs', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'plant-store-initdb-'));
    try {
      const migrations = spawn(process.execPath, ['dist/src/cli/migration.cli.js', 'run'], {
        env: { ...loginEnvironment(), DATA_DIR: dataDir },
        stdio: 'ignore',
        detached: true,
      });
      const initialising = () => readdirSync(dataDir).some((entry) => entry.includes('.init-'));
      while (!initialising()) await sleep(10);
      await sleep(200);
      process.kill(-migrations.pid!, 'SIGKILL');
      await once(migrations, 'exit');
      expect(existsSync(join(dataDir, 'postgres', 'PG_VERSION'))).toBe(false);

      const server = await EmbeddedPostgresServer.open(dataDir, quiet);
      const client = new pg.Client({ connectionString: server.url });
      await client.connect();
      expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      await client.end();
      await server.close();
      expect(readdirSync(dataDir).filter((entry) => entry.includes('.init-'))).toEqual([]);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe.runIf(runningAsRoot)('run as root', () => {
  let privateDir: string;
  beforeAll(async () => {
    privateDir = await mkdtemp(join(tmpdir(), 'plant-store-root-'));
  });
  afterAll(() => rm(privateDir, { recursive: true, force: true }));

  it('changes no permission outside DATA_DIR and runs PostgreSQL under no other account', async () => {
    const dataDir = join(privateDir, 'data');
    const modeBefore = (await stat(privateDir)).mode;
    const accountsBefore = readFileSync('/etc/passwd', 'utf8');

    const server = await EmbeddedPostgresServer.open(dataDir, quiet);
    const owner = /^Uid:\s+(\d+)/m.exec(
      readFileSync(`/proc/${postmasterOf(dataDir)}/status`, 'utf8'),
    )![1];
    await server.close();

    expect((await stat(privateDir)).mode).toBe(modeBefore);
    expect(readFileSync('/etc/passwd', 'utf8')).toBe(accountsBefore);
    expect(owner).toBe('0');
    expect((await stat(join(dataDir, 'postgres'))).uid).toBe(0);
  });

  it('refuses a DATA_DIR that another account controls, writing nothing there', async () => {
    const foreign = join(privateDir, 'foreign');
    await mkdir(foreign);
    await chown(foreign, 65534, 65534);
    await expect(EmbeddedPostgresServer.open(join(foreign, 'data'), quiet)).rejects.toThrow(
      /is owned by another account; as root, choose a DATA_DIR that only root controls/,
    );
    expect(readdirSync(foreign)).toEqual([]);
  });
});
