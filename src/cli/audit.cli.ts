import './compile-cache.js';
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { Logger } from '@nestjs/common';
import pg from 'pg';
import { cliActor } from '../audit/actor.js';
import { hex } from '../audit/chain/audit-chain.js';
import { ArchiveFileError } from '../audit/chain/archive-file.js';
import { archiveTrail, ArchiveRefusedError } from '../audit/chain/archive-trail.js';
import { type Checkpoints, type TrailVerdict, verifyTrail } from '../audit/chain/verify-trail.js';
import { commandAuditLog } from '../audit/command-audit-log.js';
import { parseDateTime } from '../common/validation/date-time.decorator.js';
import { AppConfig, ConfigError } from '../config/app-config.js';
import { isSchemaNotMigratedYet } from '../database/database-errors.js';
import { DatabaseServer } from '../database/database-server.js';

const USAGE = `Usage:
  npm run --silent audit -- verify [--archive FILE]... [--checkpoint ID:HASH]...
      walks the audit trail's hash chain (the archives given, oldest first, then the
      table) and names the first row where it breaks, or says it is whole and prints its
      last row as ID:HASH: keep that elsewhere, and give it back as --checkpoint to prove
      that the trail up to it was not rewritten since. Read-only: the service's role may
      run it. Exit status: 0 whole, 1 broken, 2 not verified.
  npm run --silent audit -- archive --before DATE FILE
      moves the rows from the first on that occurred before DATE (2026-01-01, or an RFC
      3339 date-time) into FILE, a new file (gzipped JSON lines, mode 0600), then out of
      the table, which records the archive and goes on from its last row. As the tables'
      owner. Exit status: 0 archived (or nothing that old), 1 refused, 2 usage.
The database is DATABASE_URL's, or the embedded one in DATA_DIR.`;

/** How verify answers: whole, broken, or not verified. */
const VERIFIED = { whole: 0, broken: 1, notVerified: 2 } as const;

class UsageError extends Error {}

/** A refusal, said in one line. */
class RefusedError extends Error {}

/** `ID:HASH`, a row's id and its hash in hex, as verify prints the last row. */
const CHECKPOINT = /^(\d{1,19}):([0-9a-f]{64})$/i;
/** A calendar date, midnight UTC. */
const DATE = /^\d{4}-\d{2}-\d{2}$/;

function parseCheckpoints(values: string[]): Checkpoints {
  return new Map(
    values.map((value) => {
      const match = CHECKPOINT.exec(value);
      if (!match) {
        throw new UsageError(
          `--checkpoint takes ID:HASH (a row id, a SHA-256 in hex), not "${value}"`,
        );
      }
      return [match[1], Buffer.from(match[2], 'hex')];
    }),
  );
}

function parseBefore(value: string | undefined): Date {
  if (value === undefined) throw new UsageError('archive needs --before DATE');
  const before = parseDateTime(DATE.test(value) ? `${value}T00:00:00Z` : value);
  if (!before) {
    throw new UsageError(
      `--before takes a date (2026-01-01, midnight UTC) or an RFC 3339 date-time, not "${value}"`,
    );
  }
  return before;
}

function parseArguments(args: string[]) {
  try {
    return parseArgs({
      args,
      allowPositionals: true,
      options: {
        archive: { type: 'string', multiple: true, default: [] },
        checkpoint: { type: 'string', multiple: true, default: [] },
        before: { type: 'string' },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/**
 * `npm run audit -- verify` and `npm run audit -- archive`: the audit trail's hash chain
 * (docs/operations/security.md, "The audit trail"), straight on the database, whether or
 * not the service runs.
 */
async function main(command: string | undefined, argv: string[]): Promise<number> {
  const { positionals, values } = parseArguments(argv);
  if (command === 'verify' && positionals.length === 0 && values.before === undefined) {
    const checkpoints = parseCheckpoints(values.checkpoint);
    return withDatabase('service', async (client) =>
      report(await verifyTrail(client, { archives: values.archive, checkpoints })),
    );
  }
  if (command === 'archive' && values.archive.length + values.checkpoint.length === 0) {
    const before = parseBefore(values.before);
    if (positionals.length !== 1) throw new UsageError('archive needs one FILE');
    const [file] = positionals;
    return withDatabase('owner', async (client, config) => {
      const archived = await archiveTrail(client, { before, file, actor: cliActor() });
      if (!archived) {
        process.stdout.write(
          `nothing to archive: no row occurred before ${before.toISOString()}\n`,
        );
        return 0;
      }
      (await commandAuditLog(config))(archived.anchor);
      const { firstId, lastId, rows, lastHash } = archived.header;
      process.stdout.write(
        `archived rows ${firstId} to ${lastId} (${rows}) to ${file}\n` +
          `the table goes on from row ${lastId}:${lastHash}, recorded in row ${archived.anchor.id}\n`,
      );
      return 0;
    });
  }
  throw new UsageError(
    command
      ? `unknown command or arguments: ${[command, ...argv].join(' ')}`
      : 'a command is needed',
  );
}

/**
 * Runs `work` on a connection of its own to the database, as the service's role or as the
 * tables' owner (DATABASE_MIGRATION_URL's role; DATABASE_URL's when it is unset), whom
 * alone the trigger lets delete archived rows.
 */
async function withDatabase(
  role: 'service' | 'owner',
  work: (client: pg.Client, config: AppConfig) => Promise<number>,
): Promise<number> {
  // The answer is on standard output: the embedded server's start lines stay off it.
  Logger.overrideLogger(['error', 'warn']);
  const config = AppConfig.fromEnvironment();
  const server = await DatabaseServer.connect(config);
  try {
    const service = config.databaseDirectUrl ?? server.url;
    const client = new pg.Client({
      connectionString: role === 'owner' ? (server.migrationUrl ?? service) : service,
      application_name: 'plant-store audit',
      connectionTimeoutMillis: config.databaseConnectTimeoutMs,
      statement_timeout: config.databaseStatementTimeoutMs,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return await work(client, config);
    } catch (error) {
      if (isSchemaNotMigratedYet(error)) {
        throw new RefusedError(
          'the database has no hash chain yet: run the migrations (npm run migration:run)',
        );
      }
      throw error;
    } finally {
      await client.end().catch(() => undefined);
    }
  } finally {
    await server.onApplicationShutdown();
  }
}

function report(verdict: TrailVerdict): number {
  if (!verdict.whole) {
    process.stdout.write(`audit trail broken: ${verdict.problem}\n`);
    return VERIFIED.broken;
  }
  const { rows, archivedRows, firstId, origin, last, unchecked } = verdict;
  if (rows === 0) {
    process.stdout.write('audit trail whole: no rows yet\n');
  } else {
    const from =
      origin.throughId === undefined
        ? 'the genesis'
        : `row ${origin.throughId}, the last archived (${hex(origin.hash)})`;
    const archived = archivedRows > 0 ? ` (${archivedRows} in archives)` : '';
    process.stdout.write(
      `audit trail whole: ${rows} row(s)${archived}, ids ${firstId} to ${last.throughId}, chained from ${from}\n` +
        `last row ${last.throughId}:${hex(last.hash)}\n`,
    );
  }
  if (unchecked.length === 0) return VERIFIED.whole;
  process.stdout.write(
    `not checked: row(s) ${unchecked.join(', ')}, archived before the first row walked: give their archive with --archive\n`,
  );
  return VERIFIED.notVerified;
}

const [command, ...argv] = process.argv.slice(2);
try {
  process.exitCode = await main(command, argv);
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  const known = [UsageError, RefusedError, ConfigError, ArchiveRefusedError, ArchiveFileError];
  const usage = error instanceof UsageError ? `\n${USAGE}` : '';
  process.stderr.write(
    `audit: ${known.some((type) => error instanceof type) ? '' : 'failed: '}${message}${usage}\n`,
  );
  // Verify answers 1 only for a chain it found broken; an archive refused is a 1.
  process.exitCode = error instanceof UsageError || command === 'verify' ? 2 : 1;
}
