import type { DatabaseSchema } from '../database/database-schema.js';
import { ApiToken } from './entities/api-token.entity.js';

/**
 * The tokens' table. Its migration is the first one, which it shares with the plants
 * (PLANTS_SCHEMA lists it): it predates the modules' own lists.
 */
export const AUTH_SCHEMA: DatabaseSchema = { entities: [ApiToken], migrations: [] };
