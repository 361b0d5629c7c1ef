import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  runBackupCli,
  runBackupCliInTerminal,
  runMigrationCli,
  runTokenCli,
  send,
  type ServiceProcess,
  startService,
  TERMINAL,
} from '../support/built-service.js';
import {
  onDatabaseServerRun,
  createTestDatabase,
  type TestDatabase,
} from '../support/test-database.js';
import { TEST_WEBHOOK_SECRET_KEYS } from '../support/webhook-secret-keys.js';
import { verifySignature, WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * The machine's PostgreSQL server: where the embedded run's backup moves to, as a team
 * outgrowing the embedded default does (.ci/run starts it before the embedded run).
 */
const SERVER_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
const SERVICE_ENV = { RATE_LIMIT_PER_MINUTE: '0', WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' };
/**
 * The source's receiver never answers, and one attempt at a time is made: every other
 * delivery is still pending when the backup is taken. A timed-out attempt is made again
 * at once, so the one under way is due again within WEBHOOK_TIMEOUT_MS of the restore.
 */
const SOURCE_DELIVERY = {
  WEBHOOK_TIMEOUT_MS: '5000',
  WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION: '1',
  WEBHOOK_RETRY_BASE_MS: '10',
};
const RESTORED_DELIVERY = { WEBHOOK_POLL_INTERVAL_MS: '20', WEBHOOK_TIMEOUT_MS: '1000' };

interface Database {
  kind: 'embedded' | 'server';
  env: Record<string, string>;
}

/**
 * `npm run backup` and `npm run restore`, as processes, beside the built service: a backup
 * of the database the suite runs on, taken while plants are created, restored into a new
 * database of the other kind (embedded → the server, or the server → embedded), and back.
 */
describe('npm run backup / npm run restore', () => {
  const databases: TestDatabase[] = [];
  const services: ServiceProcess[] = [];
  let workDir: string;
  let embeddedCount = 0;
  let receiver: WebhookReceiver;
  let token: string;
  let secret: string;
  let subscriptionId: string;
  let backupFile: string;
  /** The plants answered 200 before the backup began, by id. */
  let acknowledgedBefore: number[];
  let target: Database;
  let targetUrl: string;
  /**
   * The key the source's webhook secrets are encrypted with, which a restored database
   * needs beside it (docs/operations/webhooks.md, Webhook secrets at rest).
   */
  let sourceKeys: string;

  const newDatabase = async (kind: Database['kind']): Promise<Database> => {
    if (kind === 'embedded')
      return { kind, env: { DATA_DIR: join(workDir, `data-${++embeddedCount}`) } };
    const database = await createTestDatabase(
      onDatabaseServerRun ? {} : { adminUrl: SERVER_ADMIN_URL },
    );
    databases.push(database);
    return { kind, env: { ...database.env } };
  };
  const start = async (database: Database, env: Record<string, string>) => {
    const started = await startService({ ...SERVICE_ENV, ...env, ...database.env });
    services.push(started.service);
    return started.url;
  };
  /** SIGTERM, as an operator stops it: an embedded server it started stops with it. */
  const stop = async (service: ServiceProcess) => {
    service.signal('SIGTERM');
    expect(await service.exited).toEqual({ code: 0, signal: null });
  };
  /** A database's environment with the source's keys: the ones its data and backups need. */
  const withSourceKeys = (database: Database) => ({
    ...database.env,
    WEBHOOK_SECRET_KEYS: sourceKeys,
  });
  const get = (url: string, path: string) =>
    send(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  const expectPlantsThere = async (url: string) => {
    const missing = [];
    for (const id of acknowledgedBefore) {
      const { status, body } = await get(url, `/plants/${id}`);
      if (status !== 200 || JSON.parse(body).name !== `plant ${id}`) missing.push(id);
    }
    expect(missing).toEqual([]);
  };

  beforeAll(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'plant-store-backup-'));
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    for (const service of services) {
      service.signal('SIGTERM');
      await Promise.race([service.exited, sleep(15_000)]);
      await service.stop();
    }
    await receiver?.stop();
    for (const database of databases) await database.drop();
    await rm(workDir, { recursive: true, force: true });
  });

  it('a backup taken while plants are created restores into a new database of the other kind: the plants acknowledged before it began (ids exact), the tokens, the subscription and its secret, the undelivered deliveries', async () => {
    const source = await newDatabase(onDatabaseServerRun ? 'server' : 'embedded');
    const created = await runTokenCli(
      ['create', '--name', 'backup', '--scopes', 'plants:read,plants:write,webhooks:manage'],
      source.env,
    );
    expect(created.code).toBe(0);
    token = created.stdout.trim();
    const sourceService = services.length;
    const url = await start(source, SOURCE_DELIVERY);
    sourceKeys =
      source.kind === 'embedded'
        ? readFileSync(join(source.env.DATA_DIR, 'webhook-secret.key'), 'utf8').trim()
        : TEST_WEBHOOK_SECRET_KEYS;
    receiver.answer = () => 'hang';
    const subscribed = await send(`${url}/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url }),
    });
    expect(subscribed.status).toBe(201);
    ({ id: subscriptionId, secret } = JSON.parse(subscribed.body) as {
      id: string;
      secret: string;
    });

    const answeredAt = new Map<number, number>();
    let writing = true;
    let writerStopped = false;
    const writer = (async () => {
      for (let id = 1; writing; id++) {
        const { status } = await send(`${url}/plants`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ id, name: `plant ${id}` }),
        });
        expect(status).toBe(200);
        answeredAt.set(id, Date.now());
        await sleep(10);
      }
    })().finally(() => (writerStopped = true));
    // Some plants acknowledged before the backup begins, however slow the machine.
    while (answeredAt.size <= 10 && !writerStopped) await sleep(50);
    backupFile = join(workDir, 'plants.backup.gz');
    const backupBegan = Date.now();
    const backup = await runBackupCli('backup', [backupFile], source.env);
    await sleep(500);
    writing = false;
    await writer;
    expect(backup.code, backup.stderr).toBe(0);
    expect(backup.stderr).toMatch(/^backed up .*\b\d+ plants\b.* to .*plants\.backup\.gz/);
    acknowledgedBefore = [...answeredAt].filter(([, at]) => at <= backupBegan).map(([id]) => id);
    expect(acknowledgedBefore.length).toBeGreaterThan(10);
    // Plants were created while the backup ran, and after: it waited for no one.
    expect(Math.max(...answeredAt.values())).toBeGreaterThan(backupBegan);
    await stop(services[sourceService]);

    target = await newDatabase(onDatabaseServerRun ? 'embedded' : 'server');
    // The source's keys, which the backup is signed with and its secrets encrypted with.
    const restored = await runBackupCli('restore', [backupFile], withSourceKeys(target));
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stderr).toMatch(/^restored .* from .*plants\.backup\.gz/);

    receiver.received.splice(0);
    receiver.answer = () => 200;
    targetUrl = await start(target, { ...RESTORED_DELIVERY, WEBHOOK_SECRET_KEYS: sourceKeys });
    await expectPlantsThere(targetUrl);
    expect((await get(targetUrl, `/webhooks/${subscriptionId}`)).status).toBe(200);
    const delivered = new Set<number>();
    const deadline = Date.now() + 60_000;
    while (acknowledgedBefore.some((id) => !delivered.has(id)) && Date.now() < deadline) {
      for (const delivery of receiver.received.splice(0)) {
        verifySignature(secret, delivery);
        delivered.add((JSON.parse(delivery.body) as { id: number }).id);
      }
      await sleep(50);
    }
    expect(acknowledgedBefore.filter((id) => !delivered.has(id))).toEqual([]);
  }, 180_000);

  it('refuses, in one line, to restore into a database that holds data, and replaces it with --force', async () => {
    const refused = await runBackupCli('restore', [backupFile], withSourceKeys(target));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^restore: the database already holds data \(in [a-z_, ]*plants[a-z_, ]*\): restore into an empty database, or pass --force to replace its data with the backup's\n$/,
    );
    // Replaced with the service stopped, as docs/operations/database.md says.
    await stop(services.at(-1)!);
    const forced = await runBackupCli('restore', [backupFile, '--force'], withSourceKeys(target));
    expect(forced.code, forced.stderr).toBe(0);
    targetUrl = await start(target, { ...RESTORED_DELIVERY, WEBHOOK_SECRET_KEYS: sourceKeys });
    await expectPlantsThere(targetUrl);
  }, 120_000);

  it('and back: a backup of the restored database, taken while it serves, restores into a new database of the first kind', async () => {
    const backFile = join(workDir, 'back.backup.gz');
    const backup = await runBackupCli('backup', [backFile], withSourceKeys(target));
    expect(backup.code, backup.stderr).toBe(0);
    const first = await newDatabase(onDatabaseServerRun ? 'server' : 'embedded');
    const restored = await runBackupCli('restore', [backFile], withSourceKeys(first));
    expect(restored.code, restored.stderr).toBe(0);
    const url = await start(first, { WEBHOOK_SECRET_KEYS: sourceKeys });
    await expectPlantsThere(url);
    expect((await get(url, `/webhooks/${subscriptionId}`)).status).toBe(200);
  }, 120_000);

  it('restores every row byte for byte: 100,000 plants whose names hold tabs, newlines, backslashes and text beyond ASCII, the identity sequences, and every index and constraint as it was', async () => {
    const [from, into] = [await createTestDatabase(), await createTestDatabase()];
    databases.push(from, into);
    expect((await runMigrationCli(['run'], { ...from.env })).code).toBe(0);
    await from.query(`
      INSERT INTO plants (id, name, tag)
      SELECT g, 'plant ' || g || E'\\t\\n\\\\.\\r' || chr(233) || chr(128512) || repeat('x', g % 50),
             CASE WHEN g % 3 = 0 THEN E'tag\\t' || (g % 7) END
      FROM generate_series(1, 100000) AS g`);
    await from.query(`
      INSERT INTO webhook_subscriptions (url, secret) VALUES ('http://127.0.0.1:1/hook', 'whsec_x');
      INSERT INTO webhook_deliveries (subscription_id, payload, created_at)
      SELECT id, '{"id": ' || g || '}', now() FROM webhook_subscriptions, generate_series(1, 50) AS g`);
    const file = join(workDir, 'round-trip.backup.gz');
    const backup = await runBackupCli('backup', [file], { ...from.env });
    expect(backup.code, backup.stderr).toBe(0);
    const restored = await runBackupCli('restore', [file], { ...into.env });
    expect(restored.code, restored.stderr).toBe(0);
    const fingerprint = (database: TestDatabase) =>
      database.query(`
        SELECT (SELECT md5(string_agg(p::text, '|' ORDER BY id)) FROM plants AS p) AS plants,
               (SELECT md5(string_agg(d::text, '|' ORDER BY id)) FROM webhook_deliveries AS d) AS deliveries,
               (SELECT count(*) FROM plants) AS count`);
    expect(await fingerprint(into)).toEqual(await fingerprint(from));
    // The indexes and constraints the load went without are back, each as it was, valid.
    const schema = (database: TestDatabase) =>
      database.query(`
        SELECT conrelid::regclass::text AS table, conname AS name, pg_get_constraintdef(oid) AS definition
        FROM pg_constraint WHERE connamespace = current_schema()::regnamespace
        UNION ALL
        SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()
        UNION ALL
        SELECT indrelid::regclass::text, 'invalid', indexrelid::regclass::text
        FROM pg_index WHERE NOT indisvalid
        ORDER BY 1, 2, 3`);
    const restoredSchema = await schema(into);
    expect(restoredSchema).toEqual(await schema(from));
    expect(restoredSchema).toContainEqual({
      table: 'webhook_deliveries',
      name: 'webhook_deliveries_subscription_id_fkey',
      definition:
        'FOREIGN KEY (subscription_id) REFERENCES webhook_subscriptions(id) ON DELETE CASCADE',
    });
    // The next delivery gets the id after the restored ones, as it would have on the source.
    const nextId = `INSERT INTO webhook_deliveries (subscription_id, payload, created_at)
      SELECT id, '{}', now() FROM webhook_subscriptions RETURNING id`;
    expect(await into.query(nextId)).toEqual(await from.query(nextId));
  }, 120_000);
  it('refuses a backup file cut short, in one line naming it, and leaves the target database empty', async () => {
    const [from, into] = [await createTestDatabase(), await createTestDatabase()];
    databases.push(from, into);
    expect((await runMigrationCli(['run'], { ...from.env })).code).toBe(0);
    await from.query(
      `INSERT INTO plants (id, name) SELECT g, 'plant ' || g FROM generate_series(1, 100000) AS g`,
    );
    const file = join(workDir, 'cut.backup.gz');
    expect((await runBackupCli('backup', [file], { ...from.env })).code).toBe(0);
    const whole = readFileSync(file);
    writeFileSync(file, whole.subarray(0, Math.floor(whole.length / 2)));
    const restored = await runBackupCli('restore', [file], { ...into.env });
    expect(restored.code).toBe(1);
    expect(restored.stderr).toBe(
      `restore: ${file} is damaged or cut short: gzip says "unexpected end of file"\n`,
    );
    expect(await into.query('SELECT count(*)::int AS count FROM plants')).toEqual([{ count: 0 }]);
  }, 120_000);

  it.skipIf(!TERMINAL)(
    'shows its progress on a terminal, on one line redrawn in place, and only its last line off one',
    async () => {
      const [from, into] = [await createTestDatabase(), await createTestDatabase()];
      databases.push(from, into);
      expect((await runMigrationCli(['run'], { ...from.env })).code).toBe(0);
      await from.query(
        `INSERT INTO plants (id, name) SELECT g, 'plant ' || g FROM generate_series(1, 200000) AS g`,
      );
      const file = join(workDir, 'progress.backup.gz');
      const backup = await runBackupCliInTerminal('backup', [file], { ...from.env });
      expect(backup.code, backup.output).toBe(0);
      expect(backup.output).toMatch(
        /\r\x1b\[Kbackup: table \d of \d, plants: [\d,]+ of 200,0\d\d rows/,
      );
      // Erased before the last line, which stands alone.
      expect(backup.output).toMatch(/\r\x1b\[Kbacked up [^\r\x1b]+\r?\n$/);

      const restored = await runBackupCliInTerminal('restore', [file], { ...into.env });
      expect(restored.code, restored.output).toBe(0);
      expect(restored.output).toMatch(
        /\r\x1b\[Krestore: table \d of \d, plants: [\d,]+ of 200,0\d\d rows/,
      );
      expect(restored.output).toMatch(
        /\r\x1b\[Krestore: building plants_pkey: \d+ of \d+ indexes and constraints/,
      );
      expect(restored.output).toMatch(/\r\x1b\[Krestored [^\r\x1b]+\r?\n$/);

      // Off a terminal, as in a job's log: the last line alone.
      const quiet = await runBackupCli('backup', [file], { ...from.env });
      expect(quiet.code, quiet.stderr).toBe(0);
      expect(quiet.stderr).toMatch(/^backed up [^\n]+\n$/);
    },
    120_000,
  );
});
