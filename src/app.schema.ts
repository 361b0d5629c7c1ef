import { AUDIT_SCHEMA } from './audit/audit.schema.js';
import { AUTH_SCHEMA } from './auth/auth.schema.js';
import { gatherSchemas } from './database/database-schema.js';
import { PLANTS_SCHEMA } from './plants/plants.schema.js';
import { WEBHOOKS_SCHEMA } from './webhooks/webhooks.schema.js';

/**
 * Every entity and migration: each feature module's own, registered here (as its scopes
 * are in src/app.scopes.ts). The service, the migration CLI and the TypeORM CLI all read
 * this one list.
 */
export const APP_SCHEMA = gatherSchemas([
  PLANTS_SCHEMA,
  AUTH_SCHEMA,
  WEBHOOKS_SCHEMA,
  AUDIT_SCHEMA,
]);
