import { once } from 'node:events';
import { createGzip } from 'node:zlib';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import type { ProgressReporter } from '../../common/progress/progress-reporter.js';
import { lastMigration, listTables, readSequences } from './backup-catalog.js';
import { BackupDestination } from './backup-destination.js';
import {
  BACKUP_FORMAT,
  BACKUP_FORMAT_VERSION,
  type BackupHeader,
  headerLine,
} from './backup-file.js';
import { BackupRefusedError } from './backup-refused.error.js';
import { type BackupSettings, connect, rowsOf, tableColumns } from './backup-session.js';
import { BACKUP_SIGNATURE_ALGORITHM, type BackupKeys, BackupMac } from './backup-signature.js';

const NEWLINE = 0x0a;

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
  {
    keys,
    warn,
    progress,
  }: { keys: BackupKeys; warn: (line: string) => void; progress?: ProgressReporter },
): Promise<BackupSummary> {
  const destination = await BackupDestination.open(file, warn);
  try {
    const client = await connect(url, settings, 'plant-store backup');
    try {
      const header = await writeSnapshot(client, destination, keys, progress);
      return { file, bytes: await destination.commit(), header };
    } finally {
      progress?.finish();
      await client.end().catch(() => undefined);
    }
  } catch (error) {
    await destination.discard();
    throw error;
  }
}

/**
 * The header, then every table's rows, of one snapshot, then their HMAC under the first
 * signing key, into `destination`.
 */
async function writeSnapshot(
  client: pg.Client,
  destination: BackupDestination,
  keys: BackupKeys,
  progress: ProgressReporter | undefined,
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
    signature: { algorithm: BACKUP_SIGNATURE_ALGORITHM, keyId: keys.signing[0].id },
    secretKeyIds: await keys.idsInUse(rowsOf(client)),
  };
  const mac = new BackupMac(keys.signing[0]);
  const gzip = createGzip();
  const written = destination.receive(gzip);
  written.catch(() => undefined);
  /** Into the file, and into its HMAC. */
  const put = (bytes: Buffer | string) => {
    mac.update(bytes);
    return gzip.write(bytes);
  };
  try {
    put(headerLine(header));
    const total = counted.reduce((sum, { rows }) => sum + rows, 0);
    let done = 0;
    for (const [index, table] of counted.entries()) {
      const step = `table ${index + 1} of ${counted.length}, ${table.name}`;
      progress?.update({ step, done, total, unit: 'rows' });
      const copy = client.query(copyTo(`COPY ${tableColumns(table)} TO STDOUT`));
      // Written by hand, not piped: a pipeline into the same gzip per table would leave
      // a listener on it per table.
      for await (const chunk of copy) {
        if (progress) {
          done += rowsIn(chunk as Buffer);
          progress.update({ step, done, total, unit: 'rows' });
        }
        if (!put(chunk)) await once(gzip, 'drain');
      }
      if (copy.rowCount !== table.rows) {
        throw new Error(`${table.name}: copied ${copy.rowCount} rows of ${table.rows}`);
      }
    }
    gzip.end(mac.trailerLine());
  } catch (error) {
    gzip.destroy();
    throw error;
  }
  await written;
  await client.query('COMMIT');
  return header;
}

/** COPY's text format ends each row with the one newline it does not escape. */
function rowsIn(chunk: Buffer): number {
  let rows = 0;
  for (let at = chunk.indexOf(NEWLINE); at >= 0; at = chunk.indexOf(NEWLINE, at + 1)) rows++;
  return rows;
}
