import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { APP_SCHEMA } from '../app.schema.js';
import { AppConfig, ConfigError } from '../config/app-config.js';
import { BackupFileError } from '../database/backup/backup-file.js';
import { BackupRefusedError } from '../database/backup/backup-refused.error.js';
import { backUp, type BackupSummary, restore } from '../database/backup/database-backup.js';
import { dataSourceOptions } from '../database/data-source.js';
import { DatabaseServer } from '../database/database-server.js';

const USAGE = `Usage:
  npm run backup -- FILE            back up the database (the service may be running)
  npm run restore -- FILE [--force] restore FILE into an empty database (--force: replace its data)
FILE - is standard output (backup) or input (restore), with npm run --silent.
The database is DATABASE_URL's, or the embedded one in DATA_DIR.`;

class UsageError extends Error {}

/**
 * `npm run backup -- FILE` and `npm run restore -- FILE`: a logical backup of every table
 * through the `pg` driver (docs/operations/database.md, "Backups"), on either database, with no
 * PostgreSQL tools installed.
 */
async function main([command, ...args]: string[]): Promise<void> {
  const force = args.includes('--force');
  const files = args.filter((arg) => arg !== '--force');
  if ((command !== 'backup' && command !== 'restore') || files.length !== 1) {
    throw new UsageError('expected one FILE');
  }
  if (command === 'backup' && force) throw new UsageError('--force is for restore');
  const [file] = files;
  // Standard output may be the backup itself: the embedded server's start lines stay off it.
  Logger.overrideLogger(['error', 'warn']);
  const config = AppConfig.fromEnvironment();
  const server = await DatabaseServer.connect(config);
  const started = Date.now();
  try {
    if (command === 'backup') {
      const summary = await backUp(config.databaseDirectUrl ?? server.url, file, config, (line) =>
        process.stderr.write(`backup: warning: ${line}\n`),
      );
      report(`backed up ${contents(summary.header)} to ${written(summary)}`, started);
    } else {
      const service = dataSourceOptions(server.url, config, APP_SCHEMA);
      const { header, migratedAfter } = await restore(file, service, config, { force });
      const later = migratedAfter > 0 ? `, then applied ${migratedAfter} newer migration(s)` : '';
      report(`restored ${contents(header)} from ${file}${later}`, started);
    }
  } finally {
    await server.onApplicationShutdown();
  }
}

function contents(header: BackupSummary['header']): string {
  const tables = header.tables.map(({ name, rows }) => `${rows} ${name}`).join(', ');
  return `${tables} (schema at ${header.migration})`;
}

function written({ file, bytes }: BackupSummary): string {
  return bytes === undefined ? 'standard output' : `${file} (${(bytes / 1e6).toFixed(1)} MB)`;
}

function report(line: string, started: number): void {
  process.stderr.write(`${line} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

const [command] = process.argv.slice(2);
try {
  await main(process.argv.slice(2));
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof UsageError) {
    process.stderr.write(`${command ?? 'backup'}: ${message}\n${USAGE}\n`);
    process.exitCode = 2;
  } else {
    const known = [BackupRefusedError, BackupFileError, ConfigError].some(
      (t) => error instanceof t,
    );
    process.stderr.write(`${command}: ${known ? '' : 'failed: '}${message}\n`);
    process.exitCode = 1;
  }
}
