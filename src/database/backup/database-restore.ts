import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { DataSourceOptions } from 'typeorm';
import type { ProgressReporter } from '../../common/progress/progress-reporter.js';
import { type MigrationSettings, migrationUrl, runPendingMigrations } from '../migrations.js';
import { type BackupTable, lastMigration, listTables, writeSequences } from './backup-catalog.js';
import { type BackupHeader, BackupReader } from './backup-file.js';
import { BackupRefusedError } from './backup-refused.error.js';
import { type BackupSettings, connect, rowsOf, tableColumns } from './backup-session.js';
import { BACKUP_SIGNATURE_ALGORITHM, type BackupKeys, BackupMac } from './backup-signature.js';
import { dropIndexes } from './deferred-indexes.js';

export interface RestoreOptions {
  /** Replaces the rows of a database that holds some, instead of refusing. */
  force: boolean;
  /** Restores a backup that is unsigned or fails its HMAC, with a warning, instead of refusing. */
  trustUnsigned: boolean;
  keys: BackupKeys;
  /** Told what the operator should know (a backup restored unverified). */
  warn: (line: string) => void;
  progress?: ProgressReporter;
  /**
   * Tables whose rows are never removed (the audit trail): with `force`, their rows newer
   * than the backup's are kept, after them, and rows the backup lacks are refused.
   */
  appendOnly?: AppendOnlyTable[];
  /**
   * Records the restore (the audit trail), in its transaction, after everything else:
   * the restore and its record commit together.
   */
  record?: (
    query: (sql: string, parameters?: unknown[]) => Promise<unknown[]>,
    restored: { header: BackupHeader; kept: KeptRows[]; verified: boolean },
  ) => Promise<void>;
}

/** An append-only table, and the key its rows are appended in order of. */
export interface AppendOnlyTable {
  table: string;
  key: string;
}

export interface RestoreSummary {
  header: BackupHeader;
  /** Migrations newer than the backup's, applied after its rows were loaded. */
  migratedAfter: number;
  /** The append-only tables' rows newer than the backup, kept (with `force`). */
  kept: KeptRows[];
}

/**
 * Loads a backup into the database of `service`: its migrations up to the backup's, then
 * every table's rows (ids as they were) and sequences in one transaction, then the
 * migrations this release has beyond it. Refuses a database that holds data unless
 * `force`, and one whose schema is already past the backup's.
 *
 * Authenticity: the header names the key the backup is signed with and the keys its
 * secrets are encrypted with; each must be configured, which is checked before anything
 * is loaded. The HMAC is the file's last line, so it is computed as the rows stream into
 * the restore's transaction (standard input cannot be read twice) and checked once they
 * are all in, before anything outside the transaction is touched (the sequences) and
 * before it commits: a file that fails is rolled back whole, nothing of it ever visible
 * to another session.
 */
export async function restore(
  file: string,
  service: DataSourceOptions,
  settings: BackupSettings & MigrationSettings,
  options: RestoreOptions,
): Promise<RestoreSummary> {
  const reader = BackupReader.open(file);
  try {
    const header = await reader.header();
    const migrations = byTimestamp(service.migrations as Array<new () => { name?: string }>);
    const backupAt = migrations.findIndex(({ name }) => name === header.migration);
    if (backupAt < 0) {
      throw new BackupRefusedError(
        `the backup's schema is at migration ${header.migration}, which this release does not have: restore it with the release that made it, or a later one`,
      );
    }
    assertKeysConfigured(file, header.secretKeyIds ?? [], options.keys);
    const mac = authenticator(reader, header, options);
    const client = await connect(migrationUrl(service, settings), settings, 'plant-store restore');
    let kept: KeptRows[];
    try {
      const current = await lastMigration(client);
      const currentAt = migrations.findIndex(({ name }) => name === current);
      if (current !== undefined && (currentAt < 0 || currentAt > backupAt)) {
        throw new BackupRefusedError(
          `the database's schema is at migration ${current}, past the backup's (${header.migration}): restore into a new, empty database`,
        );
      }
      await runPendingMigrations(
        { ...service, migrations: migrations.slice(0, backupAt + 1).map(({ type }) => type) },
        { ...settings, flushedByNextCommit: true },
      );
      kept = await load(client, reader, header, mac, options);
    } finally {
      await client.end().catch(() => undefined);
    }
    const newer = migrations.length - (backupAt + 1);
    const migratedAfter = newer > 0 ? (await runPendingMigrations(service, settings)).length : 0;
    return { header, migratedAfter, kept };
  } finally {
    options.progress?.finish();
    reader.close();
  }
}

/** Refuses, naming it, a key that stored secrets are encrypted with and that is not configured. */
function assertKeysConfigured(file: string, idsInUse: string[], keys: BackupKeys): void {
  const missing = idsInUse.find((id) => !keys.signing.some((key) => key.id === id));
  if (missing !== undefined) {
    throw new BackupRefusedError(
      `${file} holds webhook secrets encrypted with key "${missing}", which WEBHOOK_SECRET_KEYS lacks: restore with that key configured (the one the backup's database was served with), or its secrets cannot be read`,
    );
  }
}

/**
 * The HMAC the reader feeds, under the key the header names; undefined when the backup
 * cannot be verified and --trust-unsigned says to restore it anyway.
 */
function authenticator(
  reader: BackupReader,
  header: BackupHeader,
  { keys, trustUnsigned, warn }: RestoreOptions,
): BackupMac | undefined {
  const { signature } = header;
  const key = keys.signing.find(({ id }) => id === signature?.keyId);
  if (key && signature?.algorithm === BACKUP_SIGNATURE_ALGORITHM) {
    const mac = new BackupMac(key);
    reader.authenticate(mac);
    return mac;
  }
  const why = signature
    ? `is signed with key "${signature.keyId}", which WEBHOOK_SECRET_KEYS lacks`
    : 'is not signed (a backup of a release before signing)';
  if (!trustUnsigned) {
    throw new BackupRefusedError(
      `${reader.file} ${why}: nothing shows it unaltered; restore it with the keys of the database it was made from, or pass --trust-unsigned to restore it unverified`,
    );
  }
  warn(`${reader.file} ${why}: restoring it unverified, as --trust-unsigned says`);
  return undefined;
}

/** Refuses, unless trusted anyway, a backup whose last line is not the HMAC of what came before. */
function assertAuthentic(
  reader: BackupReader,
  header: BackupHeader,
  mac: BackupMac | undefined,
  trailer: string | undefined,
  { trustUnsigned, warn }: RestoreOptions,
): void {
  if (!mac || mac.matches(trailer ?? '')) return;
  const why = `${reader.file} fails its HMAC check under key "${header.signature!.keyId}": it was changed after the backup was made, or made under another key of that id`;
  if (!trustUnsigned) {
    throw new BackupRefusedError(
      `${why}; nothing was restored (--trust-unsigned restores it unverified)`,
    );
  }
  warn(`${why}; restoring it unverified, as --trust-unsigned says`);
}

/**
 * The rows, their indexes and the sequences, in one transaction: a failed restore leaves
 * the database as it was, and so does a backup that fails its HMAC, checked before the
 * sequences are set. The rows are loaded into tables without their indexes and
 * constraints, which are built once they are all in (deferred-indexes.ts).
 */
async function load(
  client: pg.Client,
  reader: BackupReader,
  header: BackupHeader,
  mac: BackupMac | undefined,
  options: RestoreOptions,
): Promise<KeptRows[]> {
  await client.query('BEGIN');
  try {
    // Rows are loaded as they were: the audit trail's chain trigger keeps a row that comes
    // with its hash, in the owner's restore (migrations/1795888679849-ChainAuditEvents.ts).
    await client.query(`SELECT set_config('plant_store.audit_maintenance', 'restore', true)`);
    const tables = await listTables(client);
    assertSameTables(tables, header);
    const holding = await lockAndFindData(client, tables);
    if (holding.length > 0 && !options.force) {
      throw new BackupRefusedError(
        `the database already holds data (in ${holding.join(', ')}): restore into an empty database, or pass --force to replace its data with the backup's`,
      );
    }
    const appendOnly = (options.appendOnly ?? []).filter(({ table }) => holding.includes(table));
    if (holding.length > 0) {
      for (const table of appendOnly) await setAside(client, table);
      await emptyTables(client, tables);
    }
    const rebuild = await dropIndexes(
      client,
      tables.map(({ name }) => name),
    );
    await copyRows(client, reader, header, options.progress);
    assertAuthentic(reader, header, mac, await reader.end(header), options);
    // What was loaded, whatever the header said (a backup restored unverified).
    assertKeysConfigured(reader.file, await options.keys.idsInUse(rowsOf(client)), options.keys);
    const kept = [];
    for (const table of appendOnly) kept.push(await putBackNewerRows(client, table));
    for (const [index, { name, create }] of rebuild.entries()) {
      options.progress?.update({
        step: `building ${name}`,
        done: index,
        total: rebuild.length,
        unit: 'indexes and constraints',
      });
      await client.query(create);
    }
    await writeSequences(client, tables, header.sequences);
    await options.record?.(rowsOf(client), { header, kept, verified: mac !== undefined });
    await client.query('COMMIT');
    return kept;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/**
 * Locks every table, and answers those that hold rows. Readers and writers wait until
 * the restore is done: its DROP INDEX, TRUNCATE and ALTER TABLE need this lock, taken at
 * once, since upgrading to it behind a reader could deadlock.
 */
async function lockAndFindData(client: pg.Client, tables: BackupTable[]): Promise<string[]> {
  const names = tables.map(({ name }) => pg.escapeIdentifier(name)).join(', ');
  await client.query(`LOCK TABLE ${names} IN ACCESS EXCLUSIVE MODE`);
  const holding = [];
  for (const { name } of tables) {
    const { rows } = await client.query<{ any: boolean }>(
      `SELECT EXISTS (SELECT FROM ${pg.escapeIdentifier(name)}) AS any`,
    );
    if (rows[0].any) holding.push(name);
  }
  return holding;
}

/**
 * As pg_restore --disable-triggers: the tables' own triggers guard the service's writes
 * (audit_events refuses TRUNCATE), not a restore replacing every row at once. Disabled in
 * this transaction only: a failed restore leaves them as they were.
 */
async function emptyTables(client: pg.Client, tables: BackupTable[]): Promise<void> {
  const names = tables.map(({ name }) => pg.escapeIdentifier(name));
  for (const name of names) await client.query(`ALTER TABLE ${name} DISABLE TRIGGER USER`);
  await client.query(`TRUNCATE ${names.join(', ')}`);
  for (const name of names) await client.query(`ALTER TABLE ${name} ENABLE TRIGGER USER`);
}

/** Every table's rows, with COPY, a chunk at a time as the file is read. */
async function copyRows(
  client: pg.Client,
  reader: BackupReader,
  header: BackupHeader,
  progress: ProgressReporter | undefined,
): Promise<void> {
  const total = header.tables.reduce((sum, { rows }) => sum + rows, 0);
  let done = 0;
  for (const [index, table] of header.tables.entries()) {
    const step = `table ${index + 1} of ${header.tables.length}, ${table.name}`;
    progress?.update({ step, done, total, unit: 'rows' });
    const copy = client.query(copyFrom(`COPY ${tableColumns(table)} FROM STDIN`));
    // Its failures are awaited below (drain, finished); a late one, the server's answer
    // to the CopyFail sent when it is destroyed, must not crash the process.
    copy.on('error', () => undefined);
    try {
      await reader.rows(table.rows, async (chunk, rows) => {
        done += rows;
        progress?.update({ step, done, total, unit: 'rows' });
        if (!copy.write(chunk)) await once(copy, 'drain');
      });
      copy.end();
      await finished(copy);
    } catch (error) {
      // Destroying it ends the COPY with CopyFail, so the session can roll back; its
      // rows go with the transaction.
      copy.destroy();
      throw error;
    }
    if (copy.rowCount !== table.rows) {
      throw new Error(`${table.name}: stored ${copy.rowCount} rows of ${table.rows}`);
    }
  }
}

/** The temporary copy of an append-only table's rows, until the restore's transaction ends. */
const asideName = ({ table }: AppendOnlyTable) => pg.escapeIdentifier(`restore_aside_${table}`);

/** Copies an append-only table's rows aside, before the restore empties it. */
async function setAside(client: pg.Client, table: AppendOnlyTable): Promise<void> {
  await client.query(
    `CREATE TEMPORARY TABLE ${asideName(table)} ON COMMIT DROP AS TABLE ${pg.escapeIdentifier(table.table)}`,
  );
}

/** How many rows of an append-only table the restore kept, being newer than the backup. */
export interface KeptRows {
  table: string;
  rows: number;
}

/**
 * Puts back an append-only table's rows that are newer than the backup's (their key past
 * the backup's last), after them. Refuses, naming them, rows the backup should hold (their
 * key within its range) but does not, as they were: another history, which replacing the
 * data would erase without a trace.
 */
async function putBackNewerRows(client: pg.Client, table: AppendOnlyTable): Promise<KeptRows> {
  const [name, key, aside] = [
    pg.escapeIdentifier(table.table),
    pg.escapeIdentifier(table.key),
    asideName(table),
  ];
  const last = `(SELECT max(${key}) FROM ${name})`;
  const { rows: lost } = await client.query<{ key: string }>(
    `SELECT aside.${key}::text AS key FROM ${aside} AS aside
     WHERE aside.${key} <= ${last}
       AND NOT EXISTS (SELECT FROM ${name} AS restored
                       WHERE restored.${key} = aside.${key} AND restored::text = aside::text)
     ORDER BY aside.${key}`,
  );
  if (lost.length > 0) {
    const shown = lost.slice(0, 5).map((row) => row.key);
    throw new BackupRefusedError(
      `--force would erase rows of ${table.table} that the backup does not hold as they are (${table.key} ${shown.join(', ')}${lost.length > shown.length ? ` and ${lost.length - shown.length} more` : ''}): nothing was restored; restore into a new, empty database instead`,
    );
  }
  const { rowCount } = await client.query(
    `INSERT INTO ${name} OVERRIDING SYSTEM VALUE
     SELECT * FROM ${aside} WHERE ${last} IS NULL OR ${key} > ${last} ORDER BY ${key}`,
  );
  return { table: table.table, rows: rowCount ?? 0 };
}

/** Refuses, in one short line naming the first difference, tables other than the backup's. */
function assertSameTables(tables: BackupTable[], header: BackupHeader): void {
  const columns = (table: BackupTable | undefined) => table?.columns.join(', ');
  for (const name of new Set([...header.tables, ...tables].map((table) => table.name))) {
    const [ours, theirs] = [tables, header.tables].map((list) => list.find((t) => t.name === name));
    if (columns(ours) === columns(theirs)) continue;
    const what = !ours
      ? `table ${name}, which the database lacks`
      : !theirs
        ? `no table ${name}, which the database has`
        : `${name} (${columns(theirs)}), where the database has (${columns(ours)})`;
    throw new BackupRefusedError(
      `the backup does not fit the database's schema at migration ${header.migration}: it has ${what}`,
    );
  }
}

/** The migrations in the order TypeORM runs them: by the timestamp ending each name. */
function byTimestamp(
  types: Array<new () => { name?: string }>,
): Array<{ type: new () => unknown; name: string }> {
  return types
    .map((type) => ({ type, name: new type().name ?? type.name }))
    .sort((a, b) => timestamp(a.name) - timestamp(b.name));
}

function timestamp(name: string): number {
  return Number(/(\d{13})$/.exec(name)?.[1] ?? 0);
}
