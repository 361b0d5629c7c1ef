import type { QueryRunner } from 'typeorm';

/**
 * Builds an index without blocking the table's writes, for a migration that says
 * `transaction = false` (CONCURRENTLY cannot run in a transaction). A build that failed
 * or was interrupted (the lock time-out, a lost connection) leaves an invalid index of
 * that name, which queries ignore and `IF NOT EXISTS` would keep: it is dropped first,
 * so the migration can simply be run again.
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
  await queryRunner.query(
    `CREATE ${unique ? 'UNIQUE ' : ''}INDEX CONCURRENTLY IF NOT EXISTS ${name} ON ${definition}`,
  );
}
