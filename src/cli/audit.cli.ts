import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { Logger } from '@nestjs/common';
import pg from 'pg';
import { hex } from '../audit/chain/audit-chain.js';
import { type Checkpoints, type TrailVerdict, verifyTrail } from '../audit/chain/verify-trail.js';
import { AppConfig, ConfigError } from '../config/app-config.js';
import { isSchemaNotMigratedYet } from '../database/database-errors.js';
import { DatabaseServer } from '../database/database-server.js';

const USAGE = `Usage:
  npm run --silent audit -- verify [--checkpoint ID:HASH]...
      walks the audit trail's hash chain and names the first row where it breaks, or says
      it is whole and prints its last row as ID:HASH: keep that elsewhere, and give it
      back as --checkpoint to prove that the trail up to it was not rewritten since
Read-only: DATABASE_URL's role may run it. The database is DATABASE_URL's, or the
embedded one in DATA_DIR.
Exit status: 0 whole, 1 broken, 2 not verified (usage, configuration, database).`;

/** What the command answers with: whole, broken, or not verified. */
const EXIT = { whole: 0, broken: 1, notVerified: 2 } as const;

class UsageError extends Error {}

/** A refusal, said in one line, that verifies nothing. */
class NotVerifiedError extends Error {}

/** `ID:HASH`, a row's id and its hash in hex, as verify prints the last row. */
const CHECKPOINT = /^(\d{1,19}):([0-9a-f]{64})$/i;

function parseCheckpoints(values: string[]): Checkpoints {
  return new Map(
    values.map((value) => {
      const match = CHECKPOINT.exec(value);
      if (!match)
        throw new UsageError(
          `--checkpoint takes ID:HASH (a row id, a SHA-256 in hex), not "${value}"`,
        );
      return [match[1], Buffer.from(match[2], 'hex')];
    }),
  );
}

function parseArguments(args: string[]) {
  try {
    return parseArgs({
      args,
      allowPositionals: true,
      options: { checkpoint: { type: 'string', multiple: true, default: [] } },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/**
 * `npm run audit -- verify`: checks the audit trail's hash chain (docs/operations/security.md,
 * "The audit trail") straight on the database, whether or not the service runs.
 */
async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArguments(argv);
  if (positionals.length !== 1 || positionals[0] !== 'verify') {
    throw new UsageError(
      positionals.length === 0
        ? 'a command is needed'
        : `unknown command "${positionals.join(' ')}"`,
    );
  }
  const checkpoints = parseCheckpoints(values.checkpoint);
  // The answer is on standard output: the embedded server's start lines stay off it.
  Logger.overrideLogger(['error', 'warn']);
  const config = AppConfig.fromEnvironment();
  const server = await DatabaseServer.connect(config);
  try {
    const client = await connect(config.databaseDirectUrl ?? server.url, config);
    try {
      return report(await verifyTrail(client, checkpoints));
    } catch (error) {
      if (isSchemaNotMigratedYet(error)) {
        throw new NotVerifiedError(
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

async function connect(url: string, config: AppConfig): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: url,
    application_name: 'plant-store audit',
    connectionTimeoutMillis: config.databaseConnectTimeoutMs,
    statement_timeout: config.databaseStatementTimeoutMs,
  });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

function report(verdict: TrailVerdict): number {
  if (!verdict.whole) {
    process.stdout.write(`audit trail broken: ${verdict.problem}\n`);
    return EXIT.broken;
  }
  const { rows, firstId, origin, last, unchecked } = verdict;
  if (rows === 0) {
    process.stdout.write('audit trail whole: no rows yet\n');
  } else {
    const from =
      origin.throughId === undefined
        ? 'the genesis'
        : `row ${origin.throughId}, the last archived (${hex(origin.hash)})`;
    process.stdout.write(
      `audit trail whole: ${rows} row(s), ids ${firstId} to ${last.throughId}, chained from ${from}\n` +
        `last row ${last.throughId}:${hex(last.hash)}\n`,
    );
  }
  if (unchecked.length === 0) return EXIT.whole;
  process.stdout.write(
    `not checked: row(s) ${unchecked.join(', ')}, archived before the table's first row\n`,
  );
  return EXIT.notVerified;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  const known = [UsageError, NotVerifiedError, ConfigError].some((type) => error instanceof type);
  const usage = error instanceof UsageError ? `\n${USAGE}` : '';
  process.stderr.write(`audit: ${known ? '' : 'failed: '}${message}${usage}\n`);
  process.exitCode = EXIT.notVerified;
}
