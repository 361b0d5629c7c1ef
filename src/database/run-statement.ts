import pg from 'pg';
import type { Statement } from './pooler-safe-statement.js';

/**
 * Runs `statement` with `values` on a connection of `pool`, as `pool.query` does. pg
 * copies every query config object it is handed, property descriptor by descriptor, into
 * an object in dictionary mode (pg 8.23's `cloneQueryConfig`), which costs the hot paths
 * more than the rest of pg's work on the query. A `pg.Query` made from the text alone is
 * not copied; it is named before it is submitted, which is when pg reads the name.
 */
export function runStatement<Row extends pg.QueryResultRow>(
  pool: pg.Pool,
  { name, text }: Statement,
  values: unknown[],
): Promise<pg.QueryResult<Row>> {
  const query = Object.assign(new pg.Query(text, values), { name });
  // pg-pool hands the callback on to the query, and releases the connection before it.
  const callbackPool = pool as unknown as {
    query(
      query: pg.Query,
      callback: (error: Error | undefined, result: pg.QueryResult<Row>) => void,
    ): void;
  };
  return new Promise((resolve, reject) =>
    callbackPool.query(query, (error, result) => (error ? reject(error) : resolve(result))),
  );
}
