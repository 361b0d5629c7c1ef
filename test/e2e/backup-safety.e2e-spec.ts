import { spawn } from 'node:child_process';
import {
  chownSync,
  closeSync,
  lstatSync,
  openSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashTokenSecret } from '../../src/auth/token-secret.js';
import {
  BACKUP_CLI,
  runBackupCli,
  runMigrationCli,
  runTokenCli,
} from '../support/built-service.js';
import { loginEnvironment } from '../support/login-environment.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { withTestSecretKeys } from '../support/webhook-secret-keys.js';

/** The mode bits of a file, as `ls -l` shows them in octal. */
const modeOf = (file: string) => (statSync(file).mode & 0o777).toString(8);

/** A key of one's own, as an operator makes one (openssl rand -base64 32). */
const key = (id: string, fill: string) => `${id}:${Buffer.alloc(32, fill).toString('base64')}`;

interface BackupContents {
  header: { tables: Array<{ name: string; columns: string[]; rows: number }> } & Record<
    string,
    unknown
  >;
  /** Each table's rows, in COPY's text format, by name. */
  rows: Map<string, string[]>;
  /** The lines after the rows: the HMAC. */
  rest: string[];
}

/** A backup file as its lines: what someone holding the file can read, and change. */
function readBackup(file: string): BackupContents {
  const [headerLine, ...lines] = gunzipSync(readFileSync(file)).toString().split('\n');
  const header = JSON.parse(headerLine) as BackupContents['header'];
  const rows = new Map<string, string[]>();
  for (const table of header.tables) rows.set(table.name, lines.splice(0, table.rows));
  return { header, rows, rest: lines };
}

/** Writes `contents` back, the header's row counts made to fit: as a forger would. */
function writeBackup(file: string, { header, rows, rest }: BackupContents): void {
  for (const table of header.tables) table.rows = rows.get(table.name)!.length;
  const lines = [
    JSON.stringify(header),
    ...header.tables.flatMap((t) => rows.get(t.name)!),
    ...rest,
  ];
  writeFileSync(file, gzipSync(lines.join('\n')));
}

/** A row of `table` in COPY's text format: `values` by column, the others null (\N). */
function row(contents: BackupContents, table: string, values: Record<string, string>): string {
  const { columns } = contents.header.tables.find(({ name }) => name === table)!;
  return columns.map((column) => values[column] ?? '\\N').join('\t');
}

/**
 * Where `npm run backup` writes, against whoever shares the directory: it creates its file
 * new (never through a link, never reusing what it finds), readable by its owner only.
 */
// Each test runs the CLI a few times: seconds each, more on a busy machine.
describe('npm run backup: the file it writes', { timeout: 120_000 }, () => {
  let workDir: string;
  let source: TestDatabase;
  let env: Record<string, string>;
  const backup = (file: string) => runBackupCli('backup', [file], env);

  beforeAll(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'plant-store-backup-file-'));
    source = await createTestDatabase();
    env = { ...source.env };
    expect((await runMigrationCli(['run'], env)).code).toBe(0);
    await source.query(`INSERT INTO plants (id, name) VALUES (1, 'Monstera')`);
  }, 60_000);
  afterAll(async () => {
    await source?.drop();
    await rm(workDir, { recursive: true, force: true });
  });

  it('is created with mode 0600, replacing a leftover FILE.partial of its own that was 0644', async () => {
    const file = join(workDir, 'leftover.backup.gz');
    writeFileSync(`${file}.partial`, 'an earlier backup, stopped', { mode: 0o644 });
    const { code, stderr } = await backup(file);
    expect(code, stderr).toBe(0);
    expect(modeOf(file)).toBe('600');
    expect(lstatSync(`${file}.partial`, { throwIfNoEntry: false })).toBeUndefined();
  });

  it('refuses, in one line, a FILE.partial that is a symbolic link, and writes nothing through it', async () => {
    const file = join(workDir, 'linked.backup.gz');
    const victim = join(workDir, 'victim.txt');
    writeFileSync(victim, 'not a backup', { mode: 0o644 });
    symlinkSync(victim, `${file}.partial`);
    const { code, stderr } = await backup(file);
    expect(code).toBe(1);
    expect(stderr).toBe(
      `backup: ${file}.partial is left over and is a symbolic link: it is not replaced; remove it, or back up to another FILE\n`,
    );
    expect(readFileSync(victim, 'utf8')).toBe('not a backup');
    expect(modeOf(victim)).toBe('644');
    expect(lstatSync(`${file}.partial`).isSymbolicLink()).toBe(true);
    expect(lstatSync(file, { throwIfNoEntry: false })).toBeUndefined();
  });

  it.runIf(process.getuid?.() === 0)(
    "refuses a FILE.partial of another user's, and leaves it",
    async () => {
      const file = join(workDir, 'theirs.backup.gz');
      writeFileSync(`${file}.partial`, 'theirs', { mode: 0o600 });
      chownSync(`${file}.partial`, 65534, 65534);
      const { code, stderr } = await backup(file);
      expect(code).toBe(1);
      expect(stderr).toBe(
        `backup: ${file}.partial is left over and is a file of another user (uid 65534): it is not replaced; remove it, or back up to another FILE\n`,
      );
      expect(readFileSync(`${file}.partial`, 'utf8')).toBe('theirs');
    },
  );

  it('replaces a symbolic link at FILE with the backup, never writing to where it led', async () => {
    const file = join(workDir, 'link-at-file.backup.gz');
    const victim = join(workDir, 'victim-of-file.txt');
    writeFileSync(victim, 'not a backup', { mode: 0o644 });
    symlinkSync(victim, file);
    const { code, stderr } = await backup(file);
    expect(code, stderr).toBe(0);
    expect(lstatSync(file).isFile()).toBe(true);
    expect(modeOf(file)).toBe('600');
    expect(readFileSync(victim, 'utf8')).toBe('not a backup');
  });

  it('into standard output redirected to a file others may read: a warning to set umask 077', async () => {
    const file = join(workDir, 'stdout.backup.gz');
    const output = openSync(file, 'w', 0o644);
    const stderr = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [BACKUP_CLI, 'backup', '-'], {
        env: { ...loginEnvironment(), ...withTestSecretKeys(env) },
        stdio: ['ignore', output, 'pipe'],
      });
      let text = '';
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      child.on('error', reject).on('close', () => resolve(text));
    });
    closeSync(output);
    expect(stderr).toMatch(
      /^backup: warning: standard output is a file that others may read \(mode 644\): it will hold token hashes and webhook secrets; set umask 077 before redirecting a backup, or chmod 600 it\nbacked up .* to standard output in [\d.]+ s\n$/,
    );
    expect(statSync(file).size).toBeGreaterThan(0);
  });
});

/**
 * What `npm run restore` accepts: a backup made by this service, under a key the operator
 * holds (its HMAC, checked before anything is committed), whose secrets the configured
 * keys open.
 */
describe('npm run restore: what it trusts', { timeout: 120_000 }, () => {
  let workDir: string;
  let source: TestDatabase;
  const databases: TestDatabase[] = [];
  const sourceEnv = () => ({ ...source.env });
  let signed: string;
  const newTarget = async () => {
    const database = await createTestDatabase();
    databases.push(database);
    return database;
  };
  const copyOf = (name: string) => {
    const file = join(workDir, name);
    writeFileSync(file, readFileSync(signed));
    return file;
  };
  const count = async (database: TestDatabase, table: string) =>
    (await database.query<{ count: number }>(`SELECT count(*)::int AS count FROM ${table}`))[0]
      .count;

  beforeAll(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'plant-store-backup-trust-'));
    source = await createTestDatabase();
    databases.push(source);
    expect((await runMigrationCli(['run'], sourceEnv())).code).toBe(0);
    await source.query(`INSERT INTO plants (id, name) VALUES (1, 'Monstera'), (2, 'Ficus')`);
    const token = await runTokenCli(['create', '--name', 'ops'], sourceEnv());
    expect(token.code, token.stderr).toBe(0);
    signed = join(workDir, 'signed.backup.gz');
    const backup = await runBackupCli('backup', [signed], sourceEnv());
    expect(backup.code, backup.stderr).toBe(0);
  }, 60_000);
  afterAll(async () => {
    for (const database of databases) await database.drop();
    await rm(workDir, { recursive: true, force: true });
  });

  it('restores a backup whose HMAC verifies', async () => {
    const target = await newTarget();
    const restored = await runBackupCli('restore', [signed], { ...target.env });
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stderr).toMatch(/^restored .* from .*signed\.backup\.gz in [\d.]+ s\n$/);
    expect(await count(target, 'plants')).toBe(2);
  });

  it("refuses, in one line, a backup with an api_tokens row added (a token of the forger's own, webhooks:manage), and loads nothing", async () => {
    const file = copyOf('forged-token.backup.gz');
    const contents = readBackup(file);
    contents.rows.get('api_tokens')!.push(
      row(contents, 'api_tokens', {
        id: '00000000-0000-4000-8000-000000000001',
        name: 'forged',
        secret_hash: hashTokenSecret('pst_forged'),
        scopes: '{webhooks:manage}',
        created_at: '2026-01-01 00:00:00+00',
      }),
    );
    writeBackup(file, contents);
    const target = await newTarget();
    const restored = await runBackupCli('restore', [file], { ...target.env });
    expect(restored.code).toBe(1);
    expect(restored.stderr).toBe(
      `restore: ${file} fails its HMAC check under key "test": it was changed after the backup was made, or made under another key of that id; nothing was restored (--trust-unsigned restores it unverified)\n`,
    );
    expect(await count(target, 'api_tokens')).toBe(0);
    expect(await count(target, 'plants')).toBe(0);
  });

  it('refuses a backup with an audit row added, and keeps the data of a database it was to replace (--force)', async () => {
    const file = copyOf('forged-audit.backup.gz');
    const contents = readBackup(file);
    const audit = contents.rows.get('audit_events')!;
    expect(audit.length).toBeGreaterThan(0);
    audit.push(
      row(contents, 'audit_events', {
        id: '1000',
        occurred_at: '2020-01-01 00:00:00+00',
        event: 'token.revoked',
        subject_type: 'api_token',
        subject_id: '00000000-0000-4000-8000-000000000002',
        actor: 'cli:someone-else',
        details: '{}',
      }),
    );
    writeBackup(file, contents);
    const target = await newTarget();
    expect((await runBackupCli('restore', [signed], { ...target.env })).code).toBe(0);
    const restored = await runBackupCli('restore', [file, '--force'], {
      ...target.env,
    });
    expect(restored.code).toBe(1);
    expect(restored.stderr).toMatch(
      /^restore: \S+ fails its HMAC check under key "test": [^\n]+\n$/,
    );
    expect(await target.query('SELECT id::int FROM audit_events WHERE id = 1000')).toEqual([]);
    expect(await count(target, 'plants')).toBe(2);
  });

  it('with --trust-unsigned, restores a backup that fails its HMAC, saying so in a warning', async () => {
    const file = copyOf('trusted.backup.gz');
    const contents = readBackup(file);
    contents.rows.get('plants')!.push(row(contents, 'plants', { id: '3', name: 'Added' }));
    writeBackup(file, contents);
    const target = await newTarget();
    const restored = await runBackupCli('restore', [file, '--trust-unsigned'], {
      ...target.env,
    });
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stderr).toMatch(
      /^restore: warning: \S+ fails its HMAC check under key "test": [^\n]+; restoring it unverified, as --trust-unsigned says\nrestored /,
    );
    expect(await count(target, 'plants')).toBe(3);
  });

  it('refuses a backup of a release before signing (format 1: no HMAC) unless --trust-unsigned', async () => {
    const file = copyOf('unsigned.backup.gz');
    const contents = readBackup(file);
    contents.header.formatVersion = 1;
    delete contents.header.signature;
    delete contents.header.secretKeyIds;
    contents.rest = [''];
    writeBackup(file, contents);
    const target = await newTarget();
    const refused = await runBackupCli('restore', [file], { ...target.env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `restore: ${file} is not signed (a backup of a release before signing): nothing shows it unaltered; restore it with the keys of the database it was made from, or pass --trust-unsigned to restore it unverified\n`,
    );
    // Refused before anything was done, the migrations included.
    expect(await target.query(`SELECT to_regclass('plants') AS plants`)).toEqual([
      { plants: null },
    ]);
    const trusted = await runBackupCli('restore', [file, '--trust-unsigned'], {
      ...target.env,
    });
    expect(trusted.code, trusted.stderr).toBe(0);
    expect(trusted.stderr).toMatch(
      /^restore: warning: \S+ is not signed \(a backup of a release before signing\): restoring it unverified, as --trust-unsigned says\nrestored /,
    );
    expect(await count(target, 'plants')).toBe(2);
  });

  it('refuses a backup signed with a key that is not configured, naming it', async () => {
    const target = await newTarget();
    const restored = await runBackupCli('restore', [signed], {
      ...target.env,
      WEBHOOK_SECRET_KEYS: key('other', 'o'),
    });
    expect(restored.code).toBe(1);
    expect(restored.stderr).toBe(
      `restore: ${signed} is signed with key "test", which WEBHOOK_SECRET_KEYS lacks: nothing shows it unaltered; restore it with the keys of the database it was made from, or pass --trust-unsigned to restore it unverified\n`,
    );
  });

  it('refuses, before loading, a backup whose webhook secrets are encrypted with a key that is not configured, naming it', async () => {
    const from = await newTarget();
    const keys = `${key('new', 'n')},${key('old', 'o')}`;
    expect((await runMigrationCli(['run'], { ...from.env, WEBHOOK_SECRET_KEYS: keys })).code).toBe(
      0,
    );
    await from.query(
      `INSERT INTO webhook_subscriptions (url, secret_encrypted) VALUES ('http://127.0.0.1:1/hook', 'v2:old:c2VhbGVk')`,
    );
    const file = join(workDir, 'old-key.backup.gz');
    const backup = await runBackupCli('backup', [file], {
      ...from.env,
      WEBHOOK_SECRET_KEYS: keys,
    });
    expect(backup.code, backup.stderr).toBe(0);
    const target = await newTarget();
    const restored = await runBackupCli('restore', [file], {
      ...target.env,
      WEBHOOK_SECRET_KEYS: key('new', 'n'),
    });
    expect(restored.code).toBe(1);
    expect(restored.stderr).toBe(
      `restore: ${file} holds webhook secrets encrypted with key "old", which WEBHOOK_SECRET_KEYS lacks: restore with that key configured (the one the backup's database was served with), or its secrets cannot be read\n`,
    );
    // Nothing was done: not even the migrations.
    expect(await target.query(`SELECT to_regclass('plants') AS plants`)).toEqual([
      { plants: null },
    ]);
  });

  it('refuses, in one short line, a backup whose tables differ from the schema at its migration', async () => {
    const file = copyOf('other-columns.backup.gz');
    const contents = readBackup(file);
    const plants = contents.header.tables.find(({ name }) => name === 'plants')!;
    const columns = plants.columns.join(', ');
    plants.columns.push('colour');
    contents.rows.set(
      'plants',
      contents.rows.get('plants')!.map((line) => `${line}\tgreen`),
    );
    writeBackup(file, contents);
    const target = await newTarget();
    const restored = await runBackupCli('restore', [file], { ...target.env });
    expect(restored.code).toBe(1);
    expect(restored.stderr).toBe(
      `restore: the backup does not fit the database's schema at migration ${String(contents.header.migration)}: it has plants (${columns}, colour), where the database has (${columns})\n`,
    );
  });
});

/**
 * The audit trail never loses a row to a restore: `--force` keeps the rows newer than the
 * backup, and the ids they had are never given out again.
 */
describe('npm run restore --force: the audit trail', { timeout: 120_000 }, () => {
  let workDir: string;
  const databases: TestDatabase[] = [];
  const newDatabase = async () => {
    const database = await createTestDatabase();
    databases.push(database);
    expect((await runMigrationCli(['run'], { ...database.env })).code).toBe(0);
    return database;
  };
  const trail = (database: TestDatabase) =>
    database.query<{ id: number; event: string; subject: string | null }>(
      `SELECT id::int, event, details->>'name' AS subject FROM audit_events ORDER BY id`,
    );
  const token = async (database: TestDatabase, ...args: string[]) => {
    const { code, stderr } = await runTokenCli(args, { ...database.env });
    expect(code, stderr).toBe(0);
  };

  beforeAll(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'plant-store-backup-audit-'));
  });
  afterAll(async () => {
    for (const database of databases) await database.drop();
    await rm(workDir, { recursive: true, force: true });
  });

  it('keeps the rows newer than the backup, after its own, records the backup and the restore, and never gives out their ids again', async () => {
    const database = await newDatabase();
    await token(database, 'create', '--name', 'before');
    const file = join(workDir, 'before.backup.gz');
    expect((await runBackupCli('backup', [file], { ...database.env })).code).toBe(0);
    await token(database, 'create', '--name', 'after');
    const before = await trail(database);
    expect(before.map(({ event, subject }) => `${event} ${subject}`)).toEqual([
      'token.created before',
      'backup.created null',
      'token.created after',
    ]);

    const restored = await runBackupCli('restore', [file, '--force'], {
      ...database.env,
    });
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stderr).toMatch(
      /^restored .* from \S+, kept 2 audit_events row\(s\) newer than the backup in [\d.]+ s\n$/,
    );
    const after = await trail(database);
    expect(after.slice(0, -1)).toEqual(before);
    expect(after.at(-1)).toMatchObject({ event: 'backup.restored' });
    expect(
      await database.query(
        `SELECT details->'force' AS force, details->'verified' AS verified, details->'kept' AS kept
         FROM audit_events WHERE event = 'backup.restored'`,
      ),
    ).toEqual([{ force: true, verified: true, kept: { audit_events: 2 } }]);
    // The token made after the backup is gone with the backup's data; its record is not.
    expect(await database.query(`SELECT name FROM api_tokens`)).toEqual([{ name: 'before' }]);
    await token(database, 'create', '--name', 'next');
    const next = (await trail(database)).at(-1)!;
    expect(next.subject).toBe('next');
    expect(next.id).toBeGreaterThan(Math.max(...after.map(({ id }) => id)));
  });

  it('refuses, naming them, rows the backup lacks that are not newer than its own (another history), and keeps the data', async () => {
    const [from, into] = [await newDatabase(), await newDatabase()];
    await token(from, 'create', '--name', 'from-1');
    await token(from, 'create', '--name', 'from-2');
    await token(into, 'create', '--name', 'into-1');
    const file = join(workDir, 'other-history.backup.gz');
    expect((await runBackupCli('backup', [file], { ...from.env })).code).toBe(0);
    const before = await trail(into);

    const restored = await runBackupCli('restore', [file, '--force'], { ...into.env });
    expect(restored.code).toBe(1);
    expect(restored.stderr).toBe(
      `restore: --force would erase rows of audit_events that the backup does not hold as they are (id ${before[0].id}): nothing was restored; restore into a new, empty database instead\n`,
    );
    expect(await trail(into)).toEqual(before);
  });
});
