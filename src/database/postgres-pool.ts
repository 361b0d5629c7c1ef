import pg from 'pg';
import type { DataSource } from 'typeorm';

/**
 * The pg pool under TypeORM's data source. The hot paths use it directly: pg's named
 * prepared statements are parsed and planned once per connection, and skip the query
 * builder. Everything else goes through TypeORM; both share the same connections.
 * TypeORM's PostgresDriver keeps it, untyped and private, in `master`: this is the one
 * place that reads it, and it throws (at start, from the providers that call it) rather
 * than hand out something else should TypeORM change.
 */
export function postgresPool(dataSource: DataSource): pg.Pool {
  const { master } = dataSource.driver as unknown as { master?: unknown };
  if (!(master instanceof pg.Pool)) {
    throw new Error(
      'TypeORM no longer keeps its pg.Pool in driver.master: update src/database/postgres-pool.ts',
    );
  }
  return master;
}
