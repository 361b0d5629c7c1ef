import type { DatabaseSchema } from '../database/database-schema.js';
import { ApiToken } from './entities/api-token.entity.js';
import { RotateApiTokens1764400000001 } from '../../migrations/1764400000001-RotateApiTokens.js';

/**
 * The tokens' table. It is created by the first migration, which it shares with the
 * plants (PLANTS_SCHEMA lists it): that predates the modules' own lists.
 */
export const AUTH_SCHEMA: DatabaseSchema = {
  entities: [ApiToken],
  migrations: [RotateApiTokens1764400000001],
};
