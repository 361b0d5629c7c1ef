import type { Actor } from './actor.js';
import { type ChainedAuditEvent, hex } from './chain/audit-chain.js';

/** Every kind of event the trail records: stable names, which log filters rely on. */
export type AuditEventName =
  | 'token.created'
  | 'token.rotated'
  | 'token.revoked'
  | 'webhook_subscription.created'
  | 'webhook_subscription.deleted'
  | 'webhook_subscription.enabled'
  | 'webhook_subscription.redelivered'
  | 'webhook_subscription.secret_rotated'
  | 'webhook_secrets.re_encrypted'
  | 'webhook_secrets.keys_changed'
  | 'backup.created'
  | 'backup.restored'
  | 'audit_trail.archived';

/** What an event is about, named by its prefix. */
const SUBJECT_TYPES = {
  token: 'api_token',
  webhook_subscription: 'webhook_subscription',
  webhook_secrets: 'webhook_secrets',
  backup: 'backup',
  audit_trail: 'audit_trail',
} as const;

/** The subject type of `event`: `api_token` for `token.created`, say. */
export function subjectTypeOf(event: AuditEventName): string {
  return SUBJECT_TYPES[event.slice(0, event.indexOf('.')) as keyof typeof SUBJECT_TYPES];
}

/** One act of management, as a service or a command reports it. */
export interface AuditRecord {
  event: AuditEventName;
  /** The id of what was acted on: a token, a subscription, a backup. */
  subjectId: string;
  actor: Actor;
  /** Names, scopes, times, counts: never a secret, nor a token. */
  details?: Record<string, unknown>;
}

/** The message of every audit line; `event` tells them apart. */
export const AUDIT_LOG_MESSAGE = 'audit event';
/** The lines' `context`, whichever process writes them. */
export const AUDIT_LOG_CONTEXT = 'AuditTrail';

/** The fields of an event's log line: the row's, with its hash (a checkpoint to keep). */
export function auditLogFields(event: ChainedAuditEvent): Record<string, unknown> {
  return {
    event: event.event,
    auditId: event.id,
    occurredAt: event.occurredAt,
    subjectType: event.subjectType,
    subjectId: event.subjectId,
    actor: event.actor,
    actorTokenId: event.actorTokenId,
    details: JSON.parse(event.details) as unknown,
    hash: event.hash && hex(event.hash),
  };
}
