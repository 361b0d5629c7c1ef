import type { DataSourceOptions } from 'typeorm';
import { ApiToken } from '../auth/entities/api-token.entity.js';
import { Plant } from '../plants/entities/plant.entity.js';
import { CreatePlantsAndApiTokens1763700000000 } from '../../migrations/1763700000000-CreatePlantsAndApiTokens.js';

/** Listed, not globbed: the same list works compiled, under Vitest and in the TypeORM CLI. */
export const ENTITIES = [Plant, ApiToken];
export const MIGRATIONS = [CreatePlantsAndApiTokens1763700000000];

/**
 * Two cores run two statements at a time; a few more connections keep them busy while
 * the others' results travel. Measured on 2 cores, reads stop gaining at 6 connections;
 * creates need only 2 (they are batched, see PlantsRepository); one more is held by the
 * token revocation listener.
 */
const POOL_SIZE = 7;

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
    extra: { max: POOL_SIZE, application_name: 'plant-store' },
  };
}
