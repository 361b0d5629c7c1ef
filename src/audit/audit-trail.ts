import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { PinoLogger } from 'nestjs-pino';
import type { EntityManager, Repository } from 'typeorm';
import { type Actor, describeActor } from './actor.js';
import { AuditEvent } from './entities/audit-event.entity.js';

/** Every kind of event the trail records: stable names, which log filters rely on. */
export type AuditEventName =
  | 'token.created'
  | 'token.rotated'
  | 'token.revoked'
  | 'webhook_subscription.created'
  | 'webhook_subscription.deleted'
  | 'webhook_subscription.enabled'
  | 'webhook_subscription.redelivered'
  | 'webhook_subscription.secret_rotated';

/** What an event is about, named by its prefix. */
const SUBJECT_TYPES = { token: 'api_token', webhook_subscription: 'webhook_subscription' } as const;

/** One act of management, as a service reports it. */
export interface AuditRecord {
  event: AuditEventName;
  /** The id of the token or subscription acted on. */
  subjectId: string;
  actor: Actor;
  /** Names, scopes, times, counts: never a secret, nor a token. */
  details?: Record<string, unknown>;
}

/** Records an event in the transaction `AuditTrail.transaction` runs. */
export type RecordEvent = (record: AuditRecord) => Promise<void>;

/** The message of every audit line; `event` tells them apart. */
export const AUDIT_LOG_MESSAGE = 'audit event';

/**
 * The audit trail of management: each event is a row of `audit_events`, written in the
 * transaction that makes the change (no change without its record, no record of a change
 * rolled back), and, once that commits, one JSON log line with the same fields.
 */
@Injectable()
export class AuditTrail {
  constructor(
    @InjectRepository(AuditEvent) private readonly events: Repository<AuditEvent>,
    private readonly logger: PinoLogger,
  ) {
    // Not @InjectPinoLogger: its provider exists only if this class was loaded before the
    // application's LoggerModule was set up, which depends on the order of imports.
    logger.setContext(AuditTrail.name);
  }

  /**
   * Runs `change` in a transaction in which `record` writes its events; logs them once it
   * commits. A caller that retries the whole transaction (retryRefused) calls this again:
   * an attempt rolled back logs nothing.
   */
  async transaction<T>(
    change: (manager: EntityManager, record: RecordEvent) => Promise<T>,
  ): Promise<T> {
    const written: AuditEvent[] = [];
    const result = await this.events.manager.transaction((manager) =>
      change(manager, async (record) => {
        written.push(await this.write(manager, record));
      }),
    );
    for (const event of written) this.log(event);
    return result;
  }

  private async write(
    manager: EntityManager,
    { event, subjectId, actor, details = {} }: AuditRecord,
  ): Promise<AuditEvent> {
    const prefix = event.slice(0, event.indexOf('.')) as keyof typeof SUBJECT_TYPES;
    const row = manager.create(AuditEvent, {
      event,
      subjectType: SUBJECT_TYPES[prefix],
      subjectId,
      actor: describeActor(actor),
      actorTokenId: actor.kind === 'token' ? actor.tokenId : null,
      details,
    });
    return manager.save(row);
  }

  private log(event: AuditEvent): void {
    this.logger.info(
      {
        event: event.event,
        auditId: event.id,
        occurredAt: event.occurredAt.toISOString(),
        subjectType: event.subjectType,
        subjectId: event.subjectId,
        actor: event.actor,
        actorTokenId: event.actorTokenId,
        details: event.details,
      },
      AUDIT_LOG_MESSAGE,
    );
  }
}
