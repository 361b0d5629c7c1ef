import pg from 'pg';
import type { AppConfig } from '../../config/app-config.js';
import type { BackupTable } from './backup-catalog.js';

/**
 * Session settings under which COPY's text is the same whatever the server's defaults:
 * timestamps in ISO form and UTC, floats exact.
 */
const COPY_SESSION_OPTIONS =
  '-c DateStyle=ISO,YMD -c IntervalStyle=postgres -c TimeZone=UTC -c extra_float_digits=3';

export type BackupSettings = Pick<AppConfig, 'databaseConnectTimeoutMs' | 'migrationLockTimeoutMs'>;

/** Runs a statement on `client`, answering its rows. */
export function rowsOf(
  client: pg.Client,
): (sql: string, parameters?: unknown[]) => Promise<unknown[]> {
  return async (sql, parameters) => (await client.query(sql, parameters)).rows;
}

/** `table (column, …)`, quoted, for COPY. */
export function tableColumns({ name, columns }: BackupTable): string {
  return `${pg.escapeIdentifier(name)} (${columns.map((c) => pg.escapeIdentifier(c)).join(', ')})`;
}

/** A session of its own for a backup or a restore, with COPY_SESSION_OPTIONS. */
export async function connect(
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
