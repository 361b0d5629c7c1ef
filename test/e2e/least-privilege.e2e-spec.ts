import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  issueToken,
  runAuditCli,
  runBackupCli,
  runMigrationCli,
  startService,
} from '../support/built-service.js';
import {
  createTestDatabase,
  TEST_SERVICE_ROLE,
  type TestDatabase,
} from '../support/test-database.js';

/** Each table's privileges held by the service's role, and whether it owns the table. */
const PRIVILEGES = `
  SELECT relname AS table,
         array(SELECT privilege FROM unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'REFERENCES', 'TRIGGER']) AS privilege
               WHERE has_table_privilege('${TEST_SERVICE_ROLE}', pg_class.oid, privilege)) AS privileges,
         pg_has_role('${TEST_SERVICE_ROLE}', relowner, 'USAGE') AS owns
  FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'r' ORDER BY relname`;

const CHAIN =
  "SELECT id::text, event, actor, encode(hash, 'hex') AS hash FROM audit_events ORDER BY id";

/** Runs `sql` (one or several statements) on a session of its own as the role of `url`. */
async function run(url: string, sql: string): Promise<pg.QueryResult[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const result = (await client.query(sql)) as pg.QueryResult | pg.QueryResult[];
    return Array.isArray(result) ? result : [result];
  } finally {
    await client.end();
  }
}

describe("the service's role (DATABASE_URL), granted its rights by migration:run as the owner (DATABASE_MIGRATION_URL)", () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
    const migrated = await runMigrationCli(['run'], database.env);
    expect(migrated.stderr).toMatch(
      new RegExp(
        `^applied \\d+ migration\\(s\\); granted role "${TEST_SERVICE_ROLE}" the service's rights\\n$`,
      ),
    );
    // Audit rows, written as the service writes them: through its own role.
    for (const name of ['first', 'second', 'third']) await issueToken(database, name);
  }, 120_000);
  afterAll(() => database?.drop());

  it('owns nothing, may create nothing, and holds DML on its tables, only SELECT and INSERT on audit_events', async () => {
    const tables = await database.query<{ table: string; privileges: string[]; owns: boolean }>(
      PRIVILEGES,
    );
    const dml = ['SELECT', 'INSERT', 'UPDATE', 'DELETE'];
    for (const { table, privileges, owns } of tables) {
      expect({ table, owns }).toEqual({ table, owns: false });
      const expected =
        table === 'audit_events' ? ['SELECT', 'INSERT'] : table === 'migrations' ? ['SELECT'] : dml;
      expect({ table, privileges }).toEqual({ table, privileges: expected });
    }
    expect(tables.map(({ table }) => table)).toContain('plants');
    const [schema] = await database.query<{ create: boolean; owned: string }>(`
      SELECT has_schema_privilege('${TEST_SERVICE_ROLE}', 'public', 'CREATE') AS create,
             (SELECT count(*) FROM pg_class WHERE relowner = '${TEST_SERVICE_ROLE}'::regrole)
           + (SELECT count(*) FROM pg_proc WHERE proowner = '${TEST_SERVICE_ROLE}'::regrole) AS owned`);
    expect(schema).toEqual({ create: false, owned: '0' });
  });

  it('refuses every way around the audit trail: triggers, functions, the table itself, session_replication_role, UPDATE and DELETE', async () => {
    const before = await database.query(CHAIN);
    expect(before.length).toBeGreaterThanOrEqual(3);
    for (const statement of [
      'ALTER TABLE audit_events DISABLE TRIGGER USER; DELETE FROM audit_events',
      'ALTER TABLE audit_events DISABLE TRIGGER audit_events_append_only',
      'DROP TRIGGER audit_events_append_only ON audit_events',
      'CREATE OR REPLACE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$',
      'CREATE OR REPLACE FUNCTION audit_events_chain() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$',
      'DROP TABLE audit_events',
      'ALTER TABLE audit_events RENAME TO audit_events_old',
      'CREATE TABLE audit_events_forged (LIKE audit_events INCLUDING ALL)',
      'SET session_replication_role = replica; DELETE FROM audit_events',
      "UPDATE audit_events SET actor = 'cli:mallory'",
      'DELETE FROM audit_events',
      "SELECT set_config('plant_store.audit_maintenance', 'archive', false); DELETE FROM audit_events",
      'TRUNCATE audit_events',
      'ALTER TABLE plants DISABLE TRIGGER ALL',
    ]) {
      await expect(run(database.url, statement), statement).rejects.toThrow(
        /permission denied|must be owner/,
      );
    }
    expect(await database.query(CHAIN)).toEqual(before);
  });

  it('a back-dated row with a forged hash is chained by the trigger: its own id, time and hashes, and verify finds the chain whole', async () => {
    const [last] = await database.query<{ id: string; occurred_at: Date }>(
      'SELECT id::text, occurred_at FROM audit_events ORDER BY id DESC LIMIT 1',
    );
    await run(
      database.url,
      `INSERT INTO audit_events (occurred_at, event, subject_type, subject_id, actor, previous_hash, hash)
       VALUES ('2020-01-01T00:00:00Z', 'token.created', 'api_token', 'forged', 'cli:alice', '\\x00', '\\x00')`,
    );
    const [forged] = await database.query<{ id: string; occurred_at: Date; hash: string }>(
      "SELECT id::text, occurred_at, encode(hash, 'hex') AS hash FROM audit_events WHERE subject_id = 'forged'",
    );
    expect(forged.id).toBe(String(Number(last.id) + 1));
    expect(forged.occurred_at.getTime()).toBeGreaterThanOrEqual(last.occurred_at.getTime());
    expect(forged.hash).not.toBe('00');
    const verified = await runAuditCli(['verify'], database.env);
    expect(verified.stdout).toMatch(/^audit trail whole: /);
    expect(verified.code).toBe(0);
  });

  it('each run grants again: a table added later is covered, a right granted beyond is taken back', async () => {
    await run(database.migrationUrl, 'CREATE TABLE added_later (id int PRIMARY KEY)');
    await database.query(
      `GRANT TRUNCATE, TRIGGER ON plants TO ${TEST_SERVICE_ROLE}; GRANT UPDATE, DELETE ON audit_events TO ${TEST_SERVICE_ROLE}`,
    );
    const again = await runMigrationCli(['run'], database.env);
    expect(again).toMatchObject({ code: 0, stderr: expect.stringMatching(/^applied 0 migration/) });
    const privileges = Object.fromEntries(
      (await database.query<{ table: string; privileges: string[] }>(PRIVILEGES)).map(
        ({ table, privileges }) => [table, privileges],
      ),
    );
    expect(privileges).toMatchObject({
      added_later: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
      plants: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
      audit_events: ['SELECT', 'INSERT'],
    });
  });
});

describe('a migration or a restore the database refuses: its own message, in one line, at once, nothing held', () => {
  const databases: TestDatabase[] = [];
  afterAll(() => Promise.all(databases.map((database) => database.drop())));
  const fresh = async () => {
    const database = await createTestDatabase();
    databases.push(database);
    return database;
  };
  /**
   * A connection left held used to show as the pool's wait for another: with this
   * bound, a refusal that comes back sooner held none.
   */
  const CONNECT_TIMEOUT_MS = 20_000;
  const asServiceAlone = (database: TestDatabase) => ({
    DATABASE_URL: database.url,
    DATABASE_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
  });
  const sessionsLeft = (database: TestDatabase) =>
    database.query(
      `SELECT application_name FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
    );
  const timed = async <T>(work: () => Promise<T>) => {
    const started = Date.now();
    const result = await work();
    return { result, ms: Date.now() - started };
  };

  it('migration:run by a role without CREATE on the schema: "permission denied for schema public"', async () => {
    const database = await fresh();
    const { result, ms } = await timed(() => runMigrationCli(['run'], asServiceAlone(database)));
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: 'migration: permission denied for schema public\n',
    });
    expect(ms).toBeLessThan(CONNECT_TIMEOUT_MS / 2);
    expect(await sessionsLeft(database)).toEqual([]);
  });

  it("migration:run of a migration that alters a table the role does not own: the database's message alone, not TypeORM's line too", async () => {
    const database = await fresh();
    expect((await runMigrationCli(['run'], database.env)).code).toBe(0);
    const [{ name }] = await database.query<{ name: string }>(
      'DELETE FROM migrations WHERE id = (SELECT max(id) FROM migrations) RETURNING name',
    );
    const { result, ms } = await timed(() => runMigrationCli(['run'], asServiceAlone(database)));
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: expect.stringMatching(/^migration: must be owner of (table|relation) \w+\n$/),
    });
    expect(name).toBeTruthy();
    expect(ms).toBeLessThan(CONNECT_TIMEOUT_MS / 2);
    expect(await sessionsLeft(database)).toEqual([]);
  });

  it("restore by a role without CREATE on the schema: the database's message in one line", async () => {
    const source = await fresh();
    expect((await runMigrationCli(['run'], source.env)).code).toBe(0);
    const workDir = await mkdtemp(join(tmpdir(), 'plant-store-refused-'));
    try {
      const file = join(workDir, 'backup.gz');
      const backup = await runBackupCli('backup', [file], source.env);
      expect(backup.code, backup.stderr).toBe(0);
      const target = await fresh();
      const { result, ms } = await timed(() =>
        runBackupCli('restore', [file], asServiceAlone(target)),
      );
      expect(result).toEqual({
        code: 1,
        stdout: '',
        stderr: 'restore: failed: permission denied for schema public\n',
      });
      expect(ms).toBeLessThan(CONNECT_TIMEOUT_MS / 2);
      expect(await sessionsLeft(target)).toEqual([]);
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  });
});

describe('the service at start says what its role could erase', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database?.drop());

  /** The lines of the service's start log naming what its role could erase. */
  const warnings = async (env: Record<string, string>) => {
    const { service } = await startService({ ...env, LOG_FORMAT: 'json' });
    try {
      return service
        .logLines()
        .filter(({ msg }) => String(msg).includes("the service's database role"))
        .map(({ msg }) => msg);
    } finally {
      await service.stop();
    }
  };

  it('one role for both (no DATABASE_MIGRATION_URL): it works, and one line says that role could erase the audit trail', async () => {
    expect(await warnings({ DATABASE_URL: database.migrationUrl })).toEqual([
      expect.stringMatching(
        /^the service's database role "plant_store_test_owner" owns its \d+ table\(s\): it could disable audit_events's triggers and erase the audit trail/,
      ),
    ]);
  });

  it('two roles: no such line', async () => {
    expect(await warnings(database.env)).toEqual([]);
  });
});
