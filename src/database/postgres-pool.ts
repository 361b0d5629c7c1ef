import type pg from 'pg';
import type { DataSource } from 'typeorm';

/**
 * The pg pool under TypeORM's data source. The hot paths use it directly: pg's named
 * prepared statements are parsed and planned once per connection, and skip the query
 * builder. Everything else goes through TypeORM; both share the same connections.
 */
export function postgresPool(dataSource: DataSource): pg.Pool {
  // TypeORM's PostgresDriver keeps its pg.Pool, untyped, in `master`.
  return (dataSource.driver as unknown as { master: pg.Pool }).master;
}
