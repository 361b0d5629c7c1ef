import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { APP_SCHEMA } from '../../src/app.schema.js';
import { AppConfig } from '../../src/config/app-config.js';
import { dataSourceOptions } from '../../src/database/data-source.js';
import { runPendingMigrations } from '../../src/database/migrations.js';
import { type VerifyOptions, verifyTrail } from '../../src/audit/chain/verify-trail.js';
import { runAuditCli, runBackupCli } from '../support/built-service.js';
import { buildApp, createTestApp, type TestApp } from '../support/test-app.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { TEST_WEBHOOK_SECRET_KEYS } from '../support/webhook-secret-keys.js';

interface ChainRow {
  id: string;
  occurred_at: string;
  event: string;
  subject_type: string;
  subject_id: string;
  actor: string;
  actor_token_id: string | null;
  details: string;
  previous_hash: string;
  hash: string;
}

/** Every row, each field as the documented canonical form writes it, hashes in hex. */
const CHAIN = `
  SELECT id::text, to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS occurred_at,
         event, subject_type, subject_id, actor, actor_token_id::text, details::text,
         encode(previous_hash, 'hex') AS previous_hash, encode(hash, 'hex') AS hash
  FROM audit_events ORDER BY audit_events.id`;

/**
 * The hash docs/operations/security.md defines, written out here on its own: SHA-256 over
 * the previous hash and each field as a 4-byte big-endian length and its UTF-8 bytes
 * (ff ff ff ff for NULL), in table order.
 */
function documentedHash(row: ChainRow): string {
  const sha256 = createHash('sha256').update(Buffer.from(row.previous_hash, 'hex'));
  for (const value of [
    row.id,
    row.occurred_at,
    row.event,
    row.subject_type,
    row.subject_id,
    row.actor,
    row.actor_token_id,
    row.details,
  ]) {
    if (value === null) {
      sha256.update(Buffer.from('ffffffff', 'hex'));
      continue;
    }
    const bytes = Buffer.from(value, 'utf8');
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length);
    sha256.update(length).update(bytes);
  }
  return sha256.digest('hex');
}

/** Each row's hash is the documented one, and each chains from the row before, ids consecutive. */
function expectOneChain(rows: ChainRow[]) {
  expect(rows[0]).toMatchObject({ id: '1', previous_hash: '0'.repeat(64) });
  rows.forEach((row, at) => {
    expect(row.hash).toBe(documentedHash(row));
    if (at > 0) {
      expect(row).toMatchObject({ id: String(at + 1), previous_hash: rows[at - 1].hash });
      expect(row.occurred_at >= rows[at - 1].occurred_at).toBe(true);
    }
  });
}

/** What verify finds, run in this process: its rules, without the CLI's start. */
const verdict = async (database: TestDatabase, options?: VerifyOptions) => {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return await verifyTrail(client, options);
  } finally {
    await client.end();
  }
};

/**
 * Appends wait for each other (the chain's lock), so forty at once on a loaded machine may
 * wait past the pool's and the statement's usual limits: what is tested is the chain.
 */
const REPLICA_ENV = {
  WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
  DATABASE_CONNECT_TIMEOUT_MS: '30000',
  DATABASE_STATEMENT_TIMEOUT_MS: '30000',
};

const verify = (database: TestDatabase, ...args: string[]) =>
  runAuditCli(['verify', ...args], { ...database.env });

describe("the audit trail's hash chain", () => {
  const databases: TestDatabase[] = [];

  /** A database whose trail is five rows, chained by the trigger. */
  const fiveRows = async (): Promise<TestDatabase> => {
    const database = await createTestDatabase();
    databases.push(database);
    const config = AppConfig.fromEnvironment({});
    await runPendingMigrations(
      dataSourceOptions(database.url, config, APP_SCHEMA),
      database.migrationSettings(config),
    );
    await database.query(`
      INSERT INTO audit_events (event, subject_type, subject_id, actor, details)
      SELECT 'token.created', 'api_token', 'token-' || n, 'cli:alice', jsonb_build_object('n', n)
      FROM generate_series(1, 5) AS n`);
    return database;
  };
  afterAll(async () => {
    for (const database of databases) await database.drop();
  });

  describe('over audited changes', () => {
    let testApp: TestApp;
    let manager: string;

    const post = (url: string, body?: unknown) =>
      testApp.request({
        method: 'POST',
        url,
        headers: { authorization: `Bearer ${manager}` },
        ...(body !== undefined && { payload: body as Record<string, unknown> }),
      });

    beforeAll(async () => {
      testApp = await createTestApp(REPLICA_ENV);
      manager = await testApp.issueToken({ scopes: ['webhooks:manage'], name: 'manager' });
    });
    afterAll(async () => {
      await testApp?.close();
    });

    it('chains each change to the one before: ids 1, 2, 3… with no gap, the previous row’s hash, SHA-256 over it and the canonical form', async () => {
      const created = await post('/webhooks', { url: 'http://127.0.0.1:1/hook' });
      expect(created.statusCode).toBe(201);
      const { id } = created.json<{ id: string }>();
      expect((await post(`/webhooks/${id}/rotate-secret`, { overlapSeconds: 0 })).statusCode).toBe(
        200,
      );
      expect(
        (
          await testApp.request({
            method: 'DELETE',
            url: `/webhooks/${id}`,
            headers: { authorization: `Bearer ${manager}` },
          })
        ).statusCode,
      ).toBe(204);
      const rows = await testApp.database.query<ChainRow>(CHAIN);
      expect(rows.map(({ event }) => event)).toEqual(
        expect.arrayContaining([
          'token.created',
          'webhook_subscription.created',
          'webhook_subscription.secret_rotated',
          'webhook_subscription.deleted',
        ]),
      );
      expectOneChain(rows);
    });

    it('chains a row whoever inserts it, with what it gives for id, time and hashes replaced: the canonical form of Unicode, escapes, numbers and NULL', async () => {
      await testApp.database.query(`
        INSERT INTO audit_events
          (id, occurred_at, event, subject_type, subject_id, actor, actor_token_id, details, previous_hash, hash)
        OVERRIDING SYSTEM VALUE VALUES
          (1000, '2000-01-01T00:00:00Z', 'token.created', 'api_token', 'x', 'cli:zoë 🌱',
           '0f8b5c4e-0000-4000-8000-000000000001',
           '{"b": [1.0, 1e3, -0.5], "a": "tab\\t quote\\" é \\u0001", "ccc": null, "": {}}',
           '\\x00', '\\x00'),
          (1001, now(), 'token.revoked', 'api_token', 'y', 'cli:root', NULL, '{}', NULL, NULL)`);
      const rows = await testApp.database.query<ChainRow>(CHAIN);
      expectOneChain(rows);
      const [unicode, plain] = rows.slice(-2);
      expect(unicode).toMatchObject({
        actor: 'cli:zoë 🌱',
        details: '{"": {}, "a": "tab\\t quote\\" é \\u0001", "b": [1.0, 1000, -0.5], "ccc": null}',
      });
      expect(unicode.occurred_at.startsWith('2000')).toBe(false);
      expect(plain.actor_token_id).toBeNull();
    });

    it('verify: whole, with its last row as ID:HASH to keep elsewhere (exit 0)', async () => {
      const rows = await testApp.database.query<ChainRow>(CHAIN);
      const last = rows.at(-1)!;
      const verified = await verify(testApp.database);
      expect(verified).toEqual({
        code: 0,
        stdout:
          `audit trail whole: ${rows.length} row(s), ids 1 to ${last.id}, chained from the genesis\n` +
          `last row ${last.id}:${last.hash}\n`,
        stderr: '',
      });
      expect(await verify(testApp.database, '--checkpoint', `${last.id}:${last.hash}`)).toEqual(
        verified,
      );
    });

    it('keeps one chain while two replicas and eight other sessions append at once: no fork, no gap', async () => {
      const second = await buildApp(
        AppConfig.fromEnvironment({
          LOG_LEVEL: 'silent',
          RATE_LIMIT_PER_MINUTE: '0',
          WEBHOOK_SECRET_KEYS: TEST_WEBHOOK_SECRET_KEYS,
          ...REPLICA_ENV,
          ...testApp.database.env,
        }),
      );
      const before = (await testApp.database.query<ChainRow>(CHAIN)).length;
      try {
        const creates = Array.from({ length: 40 }, (_, n) =>
          (n % 2 === 0 ? testApp.app : second).inject({
            method: 'POST',
            url: '/webhooks',
            headers: { authorization: `Bearer ${manager}` },
            payload: { url: `http://127.0.0.1:1/hook-${n}` },
          }),
        );
        const sessions = Array.from({ length: 8 }, async (_, session) => {
          const client = new pg.Client({ connectionString: testApp.database.url });
          await client.connect();
          try {
            for (let n = 0; n < 5; n++) {
              await client.query(
                `INSERT INTO audit_events (event, subject_type, subject_id, actor)
                 VALUES ('token.created', 'api_token', $1, 'cli:psql')`,
                [`session-${session}-${n}`],
              );
            }
          } finally {
            await client.end();
          }
        });
        const answers = await Promise.all(creates);
        await Promise.all(sessions);
        expect(answers.map(({ statusCode, body }) => (statusCode === 201 ? 201 : body))).toEqual(
          Array(40).fill(201),
        );
      } finally {
        await second.close();
      }
      const rows = await testApp.database.query<ChainRow>(CHAIN);
      expect(rows).toHaveLength(before + 40 + 40);
      expectOneChain(rows);
      expect((await verify(testApp.database)).code).toBe(0);
    });
  });

  describe('verify names the first row where it breaks (exit 1), tampered by the database’s admin', () => {
    /** `sql` run with the table's triggers off, as an owner or superuser can. */
    const tamper = (database: TestDatabase, sql: string) =>
      database.query(`
        ALTER TABLE audit_events DISABLE TRIGGER USER;
        ${sql};
        ALTER TABLE audit_events ENABLE TRIGGER USER`);
    const broken = async (database: TestDatabase, problem: string | RegExp) =>
      expect(await verdict(database)).toEqual({
        whole: false,
        problem: typeof problem === 'string' ? problem : expect.stringMatching(problem),
      });

    it('a changed actor: that row does not match its hash', async () => {
      const database = await fiveRows();
      await tamper(database, "UPDATE audit_events SET actor = 'cli:mallory' WHERE id = 3");
      expect(await verify(database)).toEqual({
        code: 1,
        stdout:
          'audit trail broken: row 3 does not match its hash: it was changed after it was written\n',
        stderr: '',
      });
    });

    it('a changed row given a new hash: the next row no longer chains from it', async () => {
      const database = await fiveRows();
      await tamper(
        database,
        `UPDATE audit_events SET actor = 'cli:mallory' WHERE id = 3;
         UPDATE audit_events AS a SET hash = audit_event_hash(a.previous_hash, a) WHERE id = 3`,
      );
      await broken(
        database,
        'row 4 does not chain from row 3: row 3 was replaced or rehashed, or row 4 was not written after it',
      );
    });

    it('a deleted row: the gap, named', async () => {
      const database = await fiveRows();
      await tamper(database, 'DELETE FROM audit_events WHERE id = 3');
      await broken(database, 'row 3 is missing: row 4 does not chain from row 2');
    });

    it('the first rows deleted: the first left does not chain from the genesis', async () => {
      const database = await fiveRows();
      await tamper(database, 'DELETE FROM audit_events WHERE id <= 2');
      await broken(
        database,
        'row 3 is the first row but does not chain from the genesis: the rows before it were removed',
      );
    });

    it('an inserted back-dated row with a forged hash, and with a hash computed as the trigger does', async () => {
      const database = await fiveRows();
      const insert = (hash: string) =>
        tamper(
          database,
          `INSERT INTO audit_events (id, occurred_at, event, subject_type, subject_id, actor, previous_hash, hash)
           OVERRIDING SYSTEM VALUE
           SELECT 6, '2020-01-01T00:00:00Z', 'token.revoked', 'api_token', 'token-1', 'cli:alice', hash, ${hash}
           FROM audit_events WHERE id = 5`,
        );
      await insert(`'\\x${'ab'.repeat(32)}'`);
      await broken(database, 'row 6 does not match its hash: it was changed after it was written');
      await tamper(database, 'DELETE FROM audit_events WHERE id = 6');
      await insert('NULL');
      await tamper(
        database,
        'UPDATE audit_events AS a SET hash = audit_event_hash(a.previous_hash, a) WHERE id = 6',
      );
      await broken(
        database,
        /^row 6 is dated 2020-01-01T00:00:00\.000000Z, before row 5 \(\d{4}-.+Z\): it was back-dated$/,
      );
    });

    it('two rows swapped: the first of them does not match its hash', async () => {
      const database = await fiveRows();
      await tamper(
        database,
        `UPDATE audit_events AS a
         SET (occurred_at, event, subject_type, subject_id, actor, actor_token_id, details, previous_hash, hash) =
             (SELECT b.occurred_at, b.event, b.subject_type, b.subject_id, b.actor, b.actor_token_id, b.details, b.previous_hash, b.hash
              FROM audit_events AS b WHERE b.id = 5 - a.id)
         WHERE a.id IN (2, 3)`,
      );
      await broken(database, 'row 2 does not match its hash: it was changed after it was written');
    });

    it('a row put before the first, chained from the genesis: the chain forks there', async () => {
      const database = await fiveRows();
      await tamper(
        database,
        `INSERT INTO audit_events (id, event, subject_type, subject_id, actor, previous_hash)
         OVERRIDING SYSTEM VALUE VALUES (0, 'token.created', 'api_token', 't', 'cli:mallory', decode(repeat('00', 32), 'hex'));
         UPDATE audit_events AS a SET hash = audit_event_hash(a.previous_hash, a) WHERE id = 0`,
      );
      await broken(
        database,
        'row 1 forks the chain: it follows the same row as row 0 (an id used again after a restore?)',
      );
    });

    it('the end cut back, or rewritten from a row on, is caught against a checkpoint kept elsewhere', async () => {
      const database = await fiveRows();
      const last = await verdict(database);
      expect(last).toMatchObject({ whole: true, last: { throughId: 5n } });
      const kept = last.whole ? last.last.hash.toString('hex') : '';
      const checkVerify = () => verify(database, '--checkpoint', `5:${kept}`);
      await tamper(database, 'DELETE FROM audit_events WHERE id = 5');
      expect(await verdict(database)).toMatchObject({ whole: true });
      expect(await checkVerify()).toEqual({
        code: 1,
        stdout: `audit trail broken: row 5 (kept with hash ${kept}) is not in the trail, which ends at row 4: rows were removed from its end (a restore?)\n`,
        stderr: '',
      });
      await database.query(`
        INSERT INTO audit_events (event, subject_type, subject_id, actor)
        VALUES ('token.created', 'api_token', 'other', 'cli:alice')`);
      const [{ hash }] = await database.query<{ hash: string }>(
        "SELECT encode(hash, 'hex') AS hash FROM audit_events WHERE id = 5",
      );
      expect(await verdict(database)).toMatchObject({ whole: true });
      expect(await checkVerify()).toEqual({
        code: 1,
        stdout: `audit trail broken: row 5 has hash ${hash}, not the ${kept} kept for it: the chain was rewritten from there, or the id was used again (a restore?)\n`,
        stderr: '',
      });
    });
  });

  describe('the migration to the chain', () => {
    it('hashes the rows written before it in id order, a rolled-back id’s gap included, and chains new rows after them', async () => {
      const database = await createTestDatabase();
      databases.push(database);
      const config = AppConfig.fromEnvironment({});
      const options = dataSourceOptions(database.url, config, APP_SCHEMA);
      const settings = database.migrationSettings(config);
      const chainAt = APP_SCHEMA.migrations.findIndex(
        ({ name }) => name === 'ChainAuditEvents1795888679849',
      );
      await runPendingMigrations(
        { ...options, migrations: APP_SCHEMA.migrations.slice(0, chainAt) },
        settings,
      );
      const insert = (subject: string) => `
        INSERT INTO audit_events (event, subject_type, subject_id, actor)
        VALUES ('token.created', 'api_token', '${subject}', 'cli:alice')`;
      await database.query(`${insert('a')}; ${insert('b')}`);
      await database.query(`BEGIN; ${insert('rolled back')}; ROLLBACK`);
      await database.query(`${insert('c')}; ${insert('d')}`);
      await runPendingMigrations(options, settings);
      await database.query(insert('after'));
      const rows = await database.query<ChainRow>(CHAIN);
      expect(rows.map(({ id, subject_id }) => `${id} ${subject_id}`)).toEqual([
        '1 a',
        '2 b',
        '4 c',
        '5 d',
        '6 after',
      ]);
      rows.forEach((row, at) => {
        expect(row.hash).toBe(documentedHash(row));
        expect(row.previous_hash).toBe(at === 0 ? '0'.repeat(64) : rows[at - 1].hash);
      });
      expect(await verdict(database)).toMatchObject({ whole: true, rows: 5 });
    });
  });

  it(
    'a backup and its restore keep the chain as it was: every row with its id, time and hashes, each recorded after them',
    { timeout: 120_000 },
    async () => {
      const from = await fiveRows();
      const into = await createTestDatabase();
      databases.push(into);
      const workDir = await mkdtemp(join(tmpdir(), 'plant-store-audit-'));
      try {
        const file = join(workDir, 'audit.backup.gz');
        const backup = await runBackupCli('backup', [file], { ...from.env });
        expect(backup.code, backup.stderr).toBe(0);
        const restored = await runBackupCli('restore', [file], { ...into.env });
        expect(restored.code, restored.stderr).toBe(0);
      } finally {
        await rm(workDir, { recursive: true, force: true });
      }
      // The five rows as they were; then each database's own record: the backup's on the
      // source (after its snapshot), the restore's on the target.
      const [fromRows, intoRows] = [await from.query(CHAIN), await into.query(CHAIN)];
      expect(intoRows.slice(0, 5)).toEqual(fromRows.slice(0, 5));
      expect([fromRows, intoRows].map((rows) => rows.slice(5).map(({ event }) => event))).toEqual([
        ['backup.created'],
        ['backup.restored'],
      ]);
      expect(await verdict(into)).toMatchObject({ whole: true, rows: 6 });
    },
  );

  describe('archive, then verify from the archive on', () => {
    const cli = `cli:${userInfo().username}`;
    let workDir: string;
    let database: TestDatabase;
    /** The rows as they were before any archive. */
    let original: ChainRow[];
    let first: string;
    let second: string;

    const archive = (before: string, file: string, env = { ...database.env }) =>
      runAuditCli(['archive', '--before', before, file], env);
    /** Rows appended now, and the moment after they committed. */
    const append = async (count: number) => {
      await database.query(`
        INSERT INTO audit_events (event, subject_type, subject_id, actor)
        SELECT 'token.created', 'api_token', 'token-' || n, 'cli:alice' FROM generate_series(1, ${count}) AS n`);
      const [{ now }] = await database.query<{ now: string }>(
        'SELECT to_char(clock_timestamp() AT TIME ZONE \'UTC\', \'YYYY-MM-DD"T"HH24:MI:SS.US"Z"\') AS now',
      );
      return now;
    };
    const lines = (file: string) =>
      gunzipSync(readFileSync(file))
        .toString('utf8')
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);

    beforeAll(async () => {
      workDir = await mkdtemp(join(tmpdir(), 'plant-store-audit-archive-'));
      database = await fiveRows();
      first = join(workDir, 'first.jsonl.gz');
      second = join(workDir, 'second.jsonl.gz');
    });
    afterAll(async () => {
      await rm(workDir, { recursive: true, force: true });
    });

    it('writes the rows before DATE to a new file (0600, gzipped JSON lines with their hashes), removes them, records the archive, and verify goes on from it', async () => {
      const cut = await append(0);
      await append(2);
      original = await database.query<ChainRow>(CHAIN);
      const archived = await archive(cut, first);
      expect(archived.code, archived.stderr).toBe(0);
      expect(archived.stdout).toBe(
        `archived rows 1 to 5 (5) to ${first}\n` +
          `the table goes on from row 5:${original[4].hash}, recorded in row 8\n`,
      );
      expect(statSync(first).mode & 0o777).toBe(0o600);
      const [header, ...rows] = lines(first);
      expect(header).toEqual({
        format: 'plant-store-audit-archive',
        formatVersion: 1,
        createdAt: expect.stringMatching(/^\d{4}-/),
        before: new Date(cut).toISOString(),
        firstId: '1',
        lastId: '5',
        rows: 5,
        previousHash: '0'.repeat(64),
        lastHash: original[4].hash,
      });
      expect(rows).toEqual(
        original.slice(0, 5).map((row) => ({
          id: row.id,
          occurredAt: row.occurred_at,
          event: row.event,
          subjectType: row.subject_type,
          subjectId: row.subject_id,
          actor: row.actor,
          actorTokenId: row.actor_token_id,
          details: row.details,
          previousHash: row.previous_hash,
          hash: row.hash,
        })),
      );
      const table = await database.query<ChainRow>(CHAIN);
      expect(table.map(({ id }) => id)).toEqual(['6', '7', '8']);
      expect(table.slice(0, 2)).toEqual(original.slice(5));
      expect({ ...table[2], details: JSON.parse(table[2].details) as unknown }).toMatchObject({
        event: 'audit_trail.archived',
        subject_type: 'audit_trail',
        subject_id: 'audit_events',
        actor: cli,
        details: {
          before: new Date(cut).toISOString(),
          firstId: '1',
          lastId: '5',
          rows: 5,
          previousHash: '0'.repeat(64),
          lastHash: original[4].hash,
          file: first,
        },
      });
      const auditLines = archived.stderr
        .split('\n')
        .filter((line) => line.includes('"audit event"'));
      expect(auditLines.map((line) => JSON.parse(line) as unknown)).toEqual([
        expect.objectContaining({
          event: 'audit_trail.archived',
          auditId: '8',
          actor: cli,
          hash: table[2].hash,
        }),
      ]);
      expect(await verify(database)).toEqual({
        code: 0,
        stdout:
          `audit trail whole: 3 row(s), ids 6 to 8, chained from row 5, the last archived (${original[4].hash})\n` +
          `last row 8:${table[2].hash}\n`,
        stderr: '',
      });
      expect(await verify(database, '--archive', first)).toEqual({
        code: 0,
        stdout:
          'audit trail whole: 8 row(s) (5 in archives), ids 1 to 8, chained from the genesis\n' +
          `last row 8:${table[2].hash}\n`,
        stderr: '',
      });
    });

    it('archives again through the first archive’s record; the archives chain on, oldest first, and a checkpoint in them is checked only with them', async () => {
      const cut = await append(0);
      await append(1);
      expect((await archive(cut, second)).code).toBe(0);
      expect((await database.query<ChainRow>(CHAIN)).map(({ id }) => id)).toEqual(['9', '10']);
      expect(await verdict(database, { archives: [first, second] })).toMatchObject({
        whole: true,
        rows: 10,
        archivedRows: 8,
        firstId: '1',
      });
      expect(await verdict(database, { archives: [second] })).toMatchObject({
        whole: true,
        firstId: '6',
        origin: { throughId: 5n },
      });
      const checkpoint = `2:${original[1].hash}`;
      expect(await verify(database, '--checkpoint', checkpoint)).toMatchObject({
        code: 2,
        stdout: expect.stringContaining(
          'not checked: row(s) 2, archived before the first row walked: give their archive with --archive\n',
        ),
      });
      expect(
        (
          await verify(
            database,
            '--archive',
            first,
            '--archive',
            second,
            '--checkpoint',
            checkpoint,
          )
        ).code,
      ).toBe(0);
      expect(await verdict(database, { archives: [second, first] })).toEqual({
        whole: false,
        problem: `${first}: row 1 comes after row 8: the ids go back`,
      });
    });

    it('verify names an archive changed, cut short or left out', async () => {
      const damaged = join(workDir, 'damaged.jsonl.gz');
      const [header, ...rows] = lines(first);
      const write = (content: Record<string, unknown>[]) =>
        writeFileSync(
          damaged,
          gzipSync(content.map((line) => `${JSON.stringify(line)}\n`).join('')),
        );
      write([
        header,
        ...rows.map((row) => (row.id === '2' ? { ...row, actor: 'cli:mallory' } : row)),
      ]);
      expect(await verdict(database, { archives: [damaged, second] })).toEqual({
        whole: false,
        problem: `${damaged}: row 2 does not match its hash: it was changed after it was written`,
      });
      write([header, ...rows.slice(0, 4)]);
      expect(await verdict(database, { archives: [damaged, second] })).toEqual({
        whole: false,
        problem: `${damaged} holds 4 row(s) ending at row 4, its header says 5 ending at row 5 with hash ${original[4].hash}: cut short or changed`,
      });
      writeFileSync(damaged, readFileSync(first).subarray(0, 200));
      expect(await verdict(database, { archives: [damaged, second] })).toEqual({
        whole: false,
        problem: expect.stringMatching(new RegExp(`^${damaged} is damaged or cut short: `)),
      });
      expect(await verdict(database, { archives: [first] })).toEqual({
        whole: false,
        problem: 'rows 6 to 8 are missing: row 9 does not chain from row 5',
      });
    });

    it('refuses a FILE that exists or is a symbolic link, and writes nothing when no row is that old', async () => {
      const before = await database.query(CHAIN);
      const target = join(workDir, 'target');
      writeFileSync(target, 'kept');
      const link = join(workDir, 'link.jsonl.gz');
      symlinkSync(target, link);
      const now = new Date().toISOString();
      expect(await archive(now, first)).toEqual({
        code: 1,
        stdout: '',
        stderr: `audit: ${first} exists: an archive is written to a new file only\n`,
      });
      expect(await archive(now, link)).toEqual({
        code: 1,
        stdout: '',
        stderr: `audit: ${link} exists: an archive is written to a new file only\n`,
      });
      expect(readFileSync(target, 'utf8')).toBe('kept');
      const none = join(workDir, 'none.jsonl.gz');
      expect(await archive('2000-01-01', none)).toEqual({
        code: 0,
        stdout: 'nothing to archive: no row occurred before 2000-01-01T00:00:00.000Z\n',
        stderr: '',
      });
      expect(existsSync(none)).toBe(false);
      expect(await archive('yesterday', none)).toMatchObject({
        code: 2,
        stderr: expect.stringMatching(/^audit: --before takes a date/),
      });
      expect(await database.query(CHAIN)).toEqual(before);
    });
  });

  describe("as a role that may only read and append (the service's, once it owns nothing)", () => {
    const role = `plant_store_test_${randomBytes(6).toString('hex')}`;
    const password = randomBytes(12).toString('hex');
    let database: TestDatabase;
    let asRole: TestDatabase['query'];
    let roleUrl: string;

    const admin = async (sql: string) => {
      const client = new pg.Client({ connectionString: inject('databaseAdminUrl') });
      await client.connect();
      try {
        await client.query(sql);
      } finally {
        await client.end();
      }
    };

    beforeAll(async () => {
      database = await fiveRows();
      await admin(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
      await database.query(`GRANT SELECT, INSERT ON audit_events TO ${role}`);
      const url = new URL(database.url);
      url.username = role;
      url.password = password;
      roleUrl = url.toString();
      asRole = async (sql) => {
        const client = new pg.Client({ connectionString: roleUrl });
        await client.connect();
        try {
          return (await client.query(sql)).rows;
        } finally {
          await client.end();
        }
      };
    });
    afterAll(async () => {
      await database?.drop();
      await admin(`DROP ROLE IF EXISTS ${role}`);
    });

    it('cannot update, delete or truncate rows, even with the archive maintenance set; a DELETE grant does not help either', async () => {
      const before = await database.query(CHAIN);
      for (const statement of [
        "UPDATE audit_events SET actor = 'cli:mallory'",
        "SELECT set_config('plant_store.audit_maintenance', 'archive', false); DELETE FROM audit_events",
        'TRUNCATE audit_events',
        'ALTER TABLE audit_events DISABLE TRIGGER USER',
        'CREATE OR REPLACE FUNCTION audit_event_hash(bytea, audit_events) RETURNS bytea LANGUAGE sql AS $$ SELECT NULL::bytea $$',
      ]) {
        await expect(asRole(statement)).rejects.toThrow(/permission denied|must be owner/);
      }
      await database.query(`GRANT DELETE ON audit_events TO ${role}`);
      await expect(
        asRole(
          "SELECT set_config('plant_store.audit_maintenance', 'archive', false); DELETE FROM audit_events",
        ),
      ).rejects.toThrow('audit_events is append-only: DELETE is refused');
      await database.query(`REVOKE DELETE ON audit_events FROM ${role}`);
      expect(await database.query(CHAIN)).toEqual(before);
    });

    it('cannot forge a row: what it inserts is chained, its own id, time and hashes replaced, even with the restore maintenance set', async () => {
      await asRole(`
        SELECT set_config('plant_store.audit_maintenance', 'restore', false);
        INSERT INTO audit_events (id, occurred_at, event, subject_type, subject_id, actor, previous_hash, hash)
        OVERRIDING SYSTEM VALUE
        VALUES (3, '2020-01-01T00:00:00Z', 'token.created', 'api_token', 'forged', 'cli:alice', '\\x00', '\\x00')`);
      const rows = await database.query<ChainRow>(CHAIN);
      expectOneChain(rows);
      expect(rows.at(-1)).toMatchObject({ id: '6', subject_id: 'forged' });
    });

    it('may verify; archive is refused, the table and the file system left as they were', async () => {
      expect((await runAuditCli(['verify'], { DATABASE_URL: roleUrl })).code).toBe(0);
      const before = await database.query(CHAIN);
      const workDir = await mkdtemp(join(tmpdir(), 'plant-store-audit-role-'));
      try {
        const file = join(workDir, 'archive.jsonl.gz');
        expect(
          await runAuditCli(['archive', '--before', new Date().toISOString(), file], {
            DATABASE_URL: roleUrl,
          }),
        ).toEqual({
          code: 1,
          stdout: '',
          stderr: 'audit: failed: permission denied for table audit_events\n',
        });
        expect(existsSync(file)).toBe(false);
      } finally {
        await rm(workDir, { recursive: true, force: true });
      }
      expect(await database.query(CHAIN)).toEqual(before);
    });
  });
});
