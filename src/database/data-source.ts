import type { DataSourceOptions } from 'typeorm';
import { ApiToken } from '../auth/entities/api-token.entity.js';
import { Plant } from '../plants/entities/plant.entity.js';
import { CreatePlantsAndApiTokens1763700000000 } from '../../migrations/1763700000000-CreatePlantsAndApiTokens.js';
import { IndexPlantsByTag1763800000000 } from '../../migrations/1763800000000-IndexPlantsByTag.js';

/** Listed, not globbed: the same list works compiled, under Vitest and in the TypeORM CLI. */
export const ENTITIES = [Plant, ApiToken];
export const MIGRATIONS = [CreatePlantsAndApiTokens1763700000000, IndexPlantsByTag1763800000000];

/** Two cores: a small pool keeps PostgreSQL busy without queueing inside it. */
const POOL_SIZE = 10;

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
