import type { DatabaseSchema } from '../database/database-schema.js';
import { Plant } from './entities/plant.entity.js';
import { CreatePlantsAndApiTokens1763700000000 } from '../../migrations/1763700000000-CreatePlantsAndApiTokens.js';
import { IndexPlantsByTag1763800000000 } from '../../migrations/1763800000000-IndexPlantsByTag.js';
import { IndexOnlyTaggedPlants1795889500000 } from '../../migrations/1795889500000-IndexOnlyTaggedPlants.js';

/** The plants' table. The first migration also creates the tokens' table (see AUTH_SCHEMA). */
export const PLANTS_SCHEMA: DatabaseSchema = {
  entities: [Plant],
  migrations: [
    CreatePlantsAndApiTokens1763700000000,
    IndexPlantsByTag1763800000000,
    IndexOnlyTaggedPlants1795889500000,
  ],
};
