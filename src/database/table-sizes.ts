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

/**
 * Counting a table's files takes its ACCESS SHARE lock, which waits behind a migration's
 * or a restore's ACCESS EXCLUSIVE; a waiting size read would then queue every later
 * statement on the table behind it. So the read gives up after this long instead.
 */
const TABLE_BYTES_LOCK_TIMEOUT = '100ms';

export interface TableBytes {
  table: string;
  bytes: number;
}

/**
 * The size on disk of each of `tables` that exists (before a migration made it: not
 * listed). Rejects, rather than waits, while another session holds a table exclusively.
 */
export async function tableBytes(pool: pg.Pool, tables: readonly string[]): Promise<TableBytes[]> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN READ ONLY');
    await client.query(`SET LOCAL lock_timeout = '${TABLE_BYTES_LOCK_TIMEOUT}'`);
    const { rows } = await client.query<TableBytes>(TABLE_BYTES, [tables]);
    await client.query('COMMIT');
    client.release();
    return rows;
  } catch (error) {
    // A connection left inside a failed transaction is not given back to the pool.
    client.release(error as Error);
    throw error;
  }
}
