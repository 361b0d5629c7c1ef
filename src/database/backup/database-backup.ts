import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import type { DataSourceOptions } from 'typeorm';
import type { AppConfig } from '../../config/app-config.js';
import { type MigrationSettings, runPendingMigrations } from '../migrations.js';
import {
  type BackupTable,
  lastMigration,
  listTables,
  readSequences,
  writeSequences,
} from './backup-catalog.js';
import { BackupDestination } from './backup-destination.js';
import {
  BACKUP_FORMAT,
  BACKUP_FORMAT_VERSION,
  type BackupHeader,
  BackupReader,
  headerLine,
} from './backup-file.js';
import { BackupRefusedError } from './backup-refused.error.js';

/**
 * Session settings under which COPY's text is the same whatever the server's defaults:
 * timestamps in ISO form and UTC, floats exact.
 */
const COPY_SESSION_OPTIONS =
  '-c DateStyle=ISO,YMD -c IntervalStyle=postgres -c TimeZone=UTC -c extra_float_digits=3';

export type BackupSettings = Pick<AppConfig, 'databaseConnectTimeoutMs' | 'migrationLockTimeoutMs'>;


export interface BackupSummary {
  file: string;
  /** The file's size; undefined on standard output. */
  bytes?: number;
  header: BackupHeader;
}

/**
 * Writes the database's rows to `file` as they were at one moment: one REPEATABLE READ,
 * READ ONLY transaction, so the service goes on writing meanwhile and nothing it commits
 * after the backup began is in it. Streams, gzipped, through a BackupDestination: a new
 * `file`.partial of mode 0600 (it holds token hashes and webhook secrets), renamed to
 * `file` once complete; `-`: standard output. `warn` is told what the operator should know.
 */
export async function backUp(
  url: string,
  file: string,
  settings: BackupSettings,
  warn: (line: string) => void,
): Promise<BackupSummary> {
  const destination = await BackupDestination.open(file, warn);
  try {
    const client = await connect(url, settings, 'plant-store backup');
    try {
      const header = await writeSnapshot(client, destination);
      return { file, bytes: await destination.commit(), header };
    } finally {
      await client.end().catch(() => undefined);
    }
  } catch (error) {
    await destination.discard();
    throw error;
  }
}

/** The header, then every table's rows, of one snapshot, into `destination`. */
async function writeSnapshot(
  client: pg.Client,
  destination: BackupDestination,
): Promise<BackupHeader> {
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  const migration = await lastMigration(client);
  if (!migration) {
    throw new BackupRefusedError(
      'the database has no schema yet (no migration ran on it): nothing to back up',
    );
  }
  const tables = await listTables(client);
  const counted: BackupHeader['tables'] = [];
  for (const table of tables) {
    const { rows } = await client.query<{ count: string }>(
      `SELECT count(*) FROM ${pg.escapeIdentifier(table.name)}`,
    );
    counted.push({ ...table, rows: Number(rows[0].count) });
  }
  const header: BackupHeader = {
    format: BACKUP_FORMAT,
    formatVersion: BACKUP_FORMAT_VERSION,
    createdAt: new Date().toISOString(),
    server: (await client.query<{ server_version: string }>('SHOW server_version')).rows[0]
      .server_version,
    migration,
    tables: counted,
    sequences: await readSequences(client, tables),
  };
  const gzip = createGzip();
  const written = destination.receive(gzip);
  written.catch(() => undefined);
  try {
    gzip.write(headerLine(header));
    for (const table of counted) {
      const copy = client.query(copyTo(`COPY ${tableColumns(table)} TO STDOUT`));
      // Written by hand, not piped: a pipeline into the same gzip per table would leave
      // a listener on it per table.
      for await (const chunk of copy) {
        if (!gzip.write(chunk)) await once(gzip, 'drain');
      }
      if (copy.rowCount !== table.rows) {
        throw new Error(`${table.name}: copied ${copy.rowCount} rows of ${table.rows}`);
      }
    }
    gzip.end();
  } catch (error) {
    gzip.destroy();
    throw error;
  }
  await written;
  await client.query('COMMIT');
  return header;
}

export interface RestoreOptions {
  /** Replaces the rows of a database that holds some, instead of refusing. */
  force: boolean;
}

export interface RestoreSummary {
  header: BackupHeader;
  /** Migrations newer than the backup's, applied after its rows were loaded. */
  migratedAfter: number;
}

/**
 * Loads a backup into the database of `service`: its migrations up to the backup's, then
 * every table's rows (ids as they were) and sequences in one transaction, then the
 * migrations this release has beyond it. Refuses a database that holds data unless
 * `force`, and one whose schema is already past the backup's.
 */
export async function restore(
  file: string,
  service: DataSourceOptions,
  settings: BackupSettings & MigrationSettings,
  { force }: RestoreOptions,
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
    const url = settings.databaseDirectUrl ?? (service as { url: string }).url;
    const client = await connect(url, settings, 'plant-store restore');
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
        settings,
      );
      await load(client, reader, header, force);
    } finally {
      await client.end().catch(() => undefined);
    }
    const migratedAfter = await runPendingMigrations(service, settings);
    return { header, migratedAfter: migratedAfter.length };
  } finally {
    reader.close();
  }
}

/** The rows and sequences, in one transaction: a failed restore leaves the database as it was. */
async function load(
  client: pg.Client,
  reader: BackupReader,
  header: BackupHeader,
  force: boolean,
): Promise<void> {
  await client.query('BEGIN');
  try {
    // Rows are loaded as they were: the audit trail's chain trigger keeps a row that comes
    // with its hash, in the owner's restore (migrations/1795888679849-ChainAuditEvents.ts).
    await client.query(`SELECT set_config('plant_store.audit_maintenance', 'restore', true)`);
    const tables = await listTables(client);
    assertSameTables(tables, header);
    const names = tables.map(({ name }) => pg.escapeIdentifier(name)).join(', ');
    // Writers wait until the restore is done; readers are served what was there, unless
    // the data is to be replaced: then the lock its TRUNCATE and ALTER TABLE need is taken
    // at once, since upgrading to it behind a reader could deadlock.
    await client.query(`LOCK TABLE ${names} IN ${force ? 'ACCESS EXCLUSIVE' : 'EXCLUSIVE'} MODE`);
    const holding = [];
    for (const { name } of tables) {
      const { rows } = await client.query<{ any: boolean }>(
        `SELECT EXISTS (SELECT FROM ${pg.escapeIdentifier(name)}) AS any`,
      );
      if (rows[0].any) holding.push(name);
    }
    if (holding.length > 0 && !force) {
      throw new BackupRefusedError(
        `the database already holds data (in ${holding.join(', ')}): restore into an empty database, or pass --force to replace its data with the backup's`,
      );
    }
    if (holding.length > 0) {
      // As pg_restore --disable-triggers: the tables' own triggers guard the service's
      // writes (audit_events refuses TRUNCATE), not a restore replacing every row at once.
      // Disabled in this transaction only: a failed restore leaves them as they were.
      for (const { name } of tables) {
        await client.query(`ALTER TABLE ${pg.escapeIdentifier(name)} DISABLE TRIGGER USER`);
      }
      await client.query(`TRUNCATE ${names}`);
      for (const { name } of tables) {
        await client.query(`ALTER TABLE ${pg.escapeIdentifier(name)} ENABLE TRIGGER USER`);
      }
    }
    for (const table of header.tables) {
      const copy = client.query(copyFrom(`COPY ${tableColumns(table)} FROM STDIN`));
      // Its failures are awaited below (drain, finished); a late one, the server's answer
      // to the CopyFail sent when it is destroyed, must not crash the process.
      copy.on('error', () => undefined);
      try {
        await reader.rows(table.rows, async (chunk) => {
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
    await reader.end();
    await writeSequences(client, tables, header.sequences);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

function assertSameTables(tables: BackupTable[], header: BackupHeader): void {
  const shape = (list: BackupTable[]) =>
    list
      .map(({ name, columns }) => `${name}(${columns.join(', ')})`)
      .sort()
      .join(' ');
  if (shape(tables) !== shape(header.tables)) {
    throw new Error(
      `at migration ${header.migration} the database's tables are ${shape(tables)}, the backup's ${shape(header.tables)}`,
    );
  }
}

function tableColumns({ name, columns }: BackupTable): string {
  return `${pg.escapeIdentifier(name)} (${columns.map((c) => pg.escapeIdentifier(c)).join(', ')})`;
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

async function connect(
  url: string,
  settings: BackupSettings,
  applicationName: string,
): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: settings.databaseConnectTimeoutMs,
    application_name: applicationName,
    // A schema change waiting for the backup's tables would queue the service behind it.
    options: `${COPY_SESSION_OPTIONS} -c lock_timeout=${settings.migrationLockTimeoutMs}`,
  });
  // A lost connection fails the COPY under way; the client's own event adds nothing.
  client.on('error', () => undefined);
  await client.connect();
  return client;
}
