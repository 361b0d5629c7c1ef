// The logger alone: the CLIs start faster without the rest of @nestjs/common (0.1 s).
import { Logger } from '@nestjs/common/services/logger.service.js';
import type { QueryRunner } from 'typeorm';
import { ProgressReporter } from '../common/progress/progress-reporter.js';

/** How often a build's progress is read from PostgreSQL. */
const PROGRESS_POLL_MS = 1_000;

/** Where a CREATE INDEX stands, as PostgreSQL reports it (pg_stat_progress_create_index). */
const BUILD_PROGRESS = `
  SELECT phase, blocks_done::float8 AS blocks_done, blocks_total::float8 AS blocks_total,
         tuples_done::float8 AS tuples_done, tuples_total::float8 AS tuples_total
  FROM pg_stat_progress_create_index WHERE pid = $1`;

interface BuildProgress {
  phase: string;
  blocks_done: number;
  blocks_total: number;
  tuples_done: number;
  tuples_total: number;
}

/**
 * Builds an index without blocking the table's writes, for a migration that says
 * `transaction = false` (CONCURRENTLY cannot run in a transaction). A build that failed
 * or was interrupted (the lock time-out, a lost connection) leaves an invalid index of
 * that name, which queries ignore and `IF NOT EXISTS` would keep: it is dropped first,
 * so the migration can simply be run again. On a large table the build takes minutes:
 * its progress shows on a terminal, or as a log line now and then.
 */
export async function createIndexConcurrently(
  queryRunner: QueryRunner,
  name: string,
  definition: string,
  { unique = false }: { unique?: boolean } = {},
): Promise<void> {
  const invalid: unknown[] = await queryRunner.query(
    `SELECT 1 FROM pg_index JOIN pg_class ON pg_class.oid = pg_index.indexrelid
     WHERE pg_class.relname = $1 AND pg_class.relnamespace = current_schema()::regnamespace
       AND NOT pg_index.indisvalid`,
    [name],
  );
  if (invalid.length > 0) await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
  await withBuildProgress(queryRunner, name, () =>
    queryRunner.query(
      `CREATE ${unique ? 'UNIQUE ' : ''}INDEX CONCURRENTLY IF NOT EXISTS ${name} ON ${definition}`,
    ),
  );
}

/**
 * Runs `build` on `queryRunner`'s connection while another of its data source's reads,
 * every PROGRESS_POLL_MS, how far that connection's CREATE INDEX is, for a
 * ProgressReporter: the blocks of the table scanned, or the tuples sorted and loaded.
 */
async function withBuildProgress(
  queryRunner: QueryRunner,
  name: string,
  build: () => Promise<unknown>,
): Promise<void> {
  const [session] = (await queryRunner.query('SELECT pg_backend_pid() AS pid')) as Array<{
    pid: number;
  }>;
  // No session to watch: the migration linter, which records the statements only.
  if (!session) {
    await build();
    return;
  }
  const { pid } = session;
  const logger = new Logger('Migrations');
  const progress = new ProgressReporter('migration', { plainLine: (line) => logger.log(line) });
  let reading = false;
  const read = async () => {
    if (reading) return;
    reading = true;
    try {
      const [state] = (await queryRunner.connection.query(BUILD_PROGRESS, [pid])) as
        BuildProgress[] | [];
      if (state) progress.update(describe(name, state));
    } catch {
      // Progress is a courtesy: a read that fails leaves the build alone.
    } finally {
      reading = false;
    }
  };
  const poll = setInterval(() => void read(), PROGRESS_POLL_MS);
  try {
    await build();
  } finally {
    clearInterval(poll);
    progress.finish();
  }
}

function describe(name: string, state: BuildProgress) {
  const step = `index ${name}, ${state.phase}`;
  if (state.blocks_total > 0) {
    return { step, done: state.blocks_done, total: state.blocks_total, unit: 'blocks' };
  }
  if (state.tuples_total > 0) {
    return { step, done: state.tuples_done, total: state.tuples_total, unit: 'tuples' };
  }
  return { step, done: 0, unit: 'blocks' };
}
