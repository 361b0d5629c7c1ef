import type { DatabaseSchema } from '../database/database-schema.js';
import { AUDIT_EVENTS_APPEND_ONLY } from './audit-events.append-only.js';
import { AuditEvent } from './entities/audit-event.entity.js';
import { CreateAuditEvents1764400000000 } from '../../migrations/1764400000000-CreateAuditEvents.js';
import { ChainAuditEvents1795888679849 } from '../../migrations/1795888679849-ChainAuditEvents.js';

/** The audit trail's append-only, hash-chained table. */
export const AUDIT_SCHEMA: DatabaseSchema = {
  entities: [AuditEvent],
  migrations: [CreateAuditEvents1764400000000, ChainAuditEvents1795888679849],
  appendOnly: [AUDIT_EVENTS_APPEND_ONLY.table],
};
