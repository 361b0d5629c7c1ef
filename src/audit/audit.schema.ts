import type { DatabaseSchema } from '../database/database-schema.js';
import { AuditEvent } from './entities/audit-event.entity.js';
import { CreateAuditEvents1764400000000 } from '../../migrations/1764400000000-CreateAuditEvents.js';

/** The audit trail's append-only table. */
export const AUDIT_SCHEMA: DatabaseSchema = {
  entities: [AuditEvent],
  migrations: [CreateAuditEvents1764400000000],
};
