import type pg from 'pg';

/**
 * Each of tables $1 that exists, with the bytes it takes on disk, its indexes and TOAST
 * included. PostgreSQL counts the files' sizes, touching no row and checking no
 * privilege: cheap whatever the table's size, and open to a role that owns nothing.
 */
const TABLE_BYTES = `
  SELECT name AS table, pg_total_relation_size(to_regclass(name))::float8 AS bytes
  FROM unnest($1::text[]) AS name
  WHERE to_regclass(name) IS NOT NULL`;

export interface TableBytes {
  table: string;
  bytes: number;
}

/** The size on disk of each of `tables` that exists (before a migration made it: not listed). */
export async function tableBytes(pool: pg.Pool, tables: readonly string[]): Promise<TableBytes[]> {
  const { rows } = await pool.query<TableBytes>(TABLE_BYTES, [tables]);
  return rows;
}
