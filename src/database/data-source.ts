import type { DataSourceOptions } from 'typeorm';
import { ApiToken } from '../auth/entities/api-token.entity.js';
import { Plant } from '../plants/entities/plant.entity.js';
import { CreatePlantsAndApiTokens1763700000000 } from '../../migrations/1763700000000-CreatePlantsAndApiTokens.js';
import { IndexPlantsByTag1763800000000 } from '../../migrations/1763800000000-IndexPlantsByTag.js';

/** Listed, not globbed: the same list works compiled, under Vitest and in the TypeORM CLI. */
export const ENTITIES = [Plant, ApiToken];
export const MIGRATIONS = [CreatePlantsAndApiTokens1763700000000, IndexPlantsByTag1763800000000];

/**
 * Two cores run two statements at a time; a few more connections keep them busy while
 * the others' results travel. Measured on 2 cores, reads stop gaining at 6 connections;
 * creates need only 2 (they are batched, see PlantsRepository); one more is held by the
 * token revocation listener.
 */
const POOL_SIZE = 7;

/**
 * A stuck database must cost a request seconds, not forever. A frozen server cannot
 * enforce its own statement_timeout, so the client bounds the wait too, a little later.
 */
const DATABASE_TIMEOUTS = {
  /** Opening a connection, or waiting for a free one in the pool. */
  connectMs: 3_000,
  /** Enforced by PostgreSQL: the statement is cancelled there. */
  statementMs: 5_000,
  /** Enforced by `pg`: no answer at all from the server. */
  queryMs: 6_000,
} as const;

/** The one definition of how the service talks to PostgreSQL. */
export function dataSourceOptions(url: string): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: false,
    extra: {
      max: POOL_SIZE,
      application_name: 'plant-store',
      connectionTimeoutMillis: DATABASE_TIMEOUTS.connectMs,
      statement_timeout: DATABASE_TIMEOUTS.statementMs,
      query_timeout: DATABASE_TIMEOUTS.queryMs,
    },
  };
}
