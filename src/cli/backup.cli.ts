import './compile-cache.js';
import 'reflect-metadata';
import { parseArgs } from 'node:util';
// The logger alone: the CLIs start faster without the rest of @nestjs/common (0.1 s).
import { Logger } from '@nestjs/common/services/logger.service.js';
import { APP_SCHEMA } from '../app.schema.js';
import { AUDIT_EVENTS_APPEND_ONLY } from '../audit/audit-events.append-only.js';
import { recordBackup, recordRestore } from '../audit/backup-events.js';
import { ProgressReporter } from '../common/progress/progress-reporter.js';
import { AppConfig, ConfigError } from '../config/app-config.js';
import { BackupFileError } from '../database/backup/backup-file.js';
import { BACKUP_SIGNING_PURPOSE, type BackupKeys } from '../database/backup/backup-signature.js';
import { BackupRefusedError } from '../database/backup/backup-refused.error.js';
import { connect, rowsOf } from '../database/backup/backup-session.js';
import { backUp, type BackupSummary } from '../database/backup/database-backup.js';
import { restore } from '../database/backup/database-restore.js';
import { dataSourceOptions } from '../database/data-source.js';
import { DatabaseServer } from '../database/database-server.js';
import { migrationSettings } from '../database/migrations.js';
import { storedSecretKeyIds } from '../webhooks/secrets/stored-secret-key-ids.js';
import {
  SecretKeyError,
  WebhookSecretKeyring,
} from '../webhooks/secrets/webhook-secret-keyring.js';

const USAGE = `Usage:
  npm run backup -- FILE     back up the database (the service may be running)
  npm run restore -- FILE [--force] [--trust-unsigned]
                             restore FILE into an empty database
    --force                  replace the data of a database that holds some
    --trust-unsigned         restore a backup that is unsigned or fails its HMAC check
FILE - is standard output (backup) or input (restore), with npm run --silent.
The database is DATABASE_URL's, or the embedded one in DATA_DIR. Backups are signed
with a key derived from the first of WEBHOOK_SECRET_KEYS (on the embedded database, of
DATA_DIR/webhook-secret.key), and verified with the key they name.`;

class UsageError extends Error {}

/** Each command's options; anything else is a usage error. */
const OPTIONS = {
  backup: {},
  restore: { force: { type: 'boolean' }, 'trust-unsigned': { type: 'boolean' } },
} as const;

function parse(command: string | undefined, args: string[]) {
  if (command !== 'backup' && command !== 'restore') throw new UsageError('unknown command');
  const { values, positionals } = (() => {
    try {
      return parseArgs({ args, options: OPTIONS[command], allowPositionals: true, strict: true });
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  })();
  if (positionals.length !== 1) throw new UsageError('expected one FILE');
  const flags = values as { force?: boolean; 'trust-unsigned'?: boolean };
  return {
    command,
    file: positionals[0],
    force: flags.force ?? false,
    trustUnsigned: flags['trust-unsigned'] ?? false,
  };
}

/** The warning lines of `command`, on stderr. */
const warner = (command: string) => (line: string) =>
  process.stderr.write(`${command}: warning: ${line}\n`);

/**
 * `npm run backup -- FILE` and `npm run restore -- FILE`: a logical backup of every table
 * through the `pg` driver (docs/operations/database.md, "Backups"), on either database, with no
 * PostgreSQL tools installed.
 */
async function main([command, ...args]: string[]): Promise<void> {
  const { file, force, trustUnsigned } = parse(command, args);
  // Standard output may be the backup itself: the embedded server's start lines stay off it.
  Logger.overrideLogger(['error', 'warn']);
  const config = AppConfig.fromEnvironment();
  const keyring = WebhookSecretKeyring.load(config);
  const keys: BackupKeys = {
    signing: keyring.derive(BACKUP_SIGNING_PURPOSE),
    idsInUse: storedSecretKeyIds,
  };
  const server = await DatabaseServer.connect(config);
  const started = Date.now();
  const warn = warner(command);
  // On a terminal, stderr's last line shows how far it is; in a job's log, a line now and then.
  const progress = new ProgressReporter(command);
  try {
    if (command === 'backup') {
      const url = config.databaseDirectUrl ?? server.url;
      const summary = await backUp(url, file, config, { keys, warn, progress });
      await recordBackupOrWarn(url, config, summary, warn);
      report(`backed up ${contents(summary.header)} to ${written(summary)}`, started);
    } else {
      const service = dataSourceOptions(server.url, config, APP_SCHEMA);
      const settings = { ...config, ...migrationSettings(config, server, APP_SCHEMA) };
      const { header, migratedAfter, kept } = await restore(file, service, settings, {
        force,
        trustUnsigned,
        keys,
        warn,
        progress,
        appendOnly: [AUDIT_EVENTS_APPEND_ONLY],
        record: (query, restored) => recordRestore(query, restored, { file, force }),
      });
      const newer = kept
        .filter(({ rows }) => rows > 0)
        .map(({ table, rows }) => `, kept ${rows} ${table} row(s) newer than the backup`)
        .join('');
      const later = migratedAfter > 0 ? `, then applied ${migratedAfter} newer migration(s)` : '';
      report(`restored ${contents(header)} from ${file}${newer}${later}`, started);
    }
  } finally {
    await server.onApplicationShutdown();
  }
}

/**
 * The backup is whole whatever happens here: a database that takes no writes (a standby)
 * cannot record it, which a warning says.
 */
async function recordBackupOrWarn(
  url: string,
  config: AppConfig,
  summary: BackupSummary,
  warn: (line: string) => void,
): Promise<void> {
  try {
    const client = await connect(url, config, 'plant-store backup');
    try {
      await recordBackup(rowsOf(client), summary.header, summary);
    } finally {
      await client.end().catch(() => undefined);
    }
  } catch (error) {
    warn(
      `the backup is whole, but the audit trail could not record it: ${(error as Error).message}`,
    );
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
    const known = [BackupRefusedError, BackupFileError, ConfigError, SecretKeyError].some(
      (t) => error instanceof t,
    );
    process.stderr.write(`${command}: ${known ? '' : 'failed: '}${message}\n`);
    process.exitCode = 1;
  }
}
