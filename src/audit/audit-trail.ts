import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { PinoLogger } from 'nestjs-pino';
import type { EntityManager, Repository } from 'typeorm';
import {
  appendAuditEvent,
  latestDetails,
  lockChain,
  managerQuery,
  trailIsEmpty,
} from './audit-events.repository.js';
import {
  AUDIT_LOG_CONTEXT,
  AUDIT_LOG_MESSAGE,
  type AuditEventName,
  auditLogFields,
  type AuditRecord,
} from './audit-record.js';
import type { ChainedAuditEvent } from './chain/audit-chain.js';
import { AuditEvent } from './entities/audit-event.entity.js';

/** Records an event in the transaction `AuditTrail.transaction` runs. */
export type RecordEvent = (record: AuditRecord) => Promise<void>;

/**
 * The audit trail of management: each event is a row of `audit_events`, written in the
 * transaction that makes the change (no change without its record, no record of a change
 * rolled back) and chained by the database to the row before it, and, once that commits,
 * one JSON log line with the same fields and the row's hash.
 */
@Injectable()
export class AuditTrail {
  constructor(
    @InjectRepository(AuditEvent) private readonly events: Repository<AuditEvent>,
    private readonly logger: PinoLogger,
  ) {
    // Not @InjectPinoLogger: its provider exists only if this class was loaded before the
    // application's LoggerModule was set up, which depends on the order of imports.
    logger.setContext(AUDIT_LOG_CONTEXT);
  }

  /**
   * Runs `change` in a transaction in which `record` writes its events; logs them once it
   * commits. A caller that retries the whole transaction (retryRefused) calls this again:
   * an attempt rolled back logs nothing.
   */
  async transaction<T>(
    change: (manager: EntityManager, record: RecordEvent) => Promise<T>,
  ): Promise<T> {
    const written: ChainedAuditEvent[] = [];
    const result = await this.events.manager.transaction((manager) =>
      change(manager, async (record) => {
        written.push(await appendAuditEvent(managerQuery(manager), record));
      }),
    );
    for (const event of written) this.logger.info(auditLogFields(event), AUDIT_LOG_MESSAGE);
    return result;
  }

  /**
   * Records what `decide` makes of the latest `event` about `subjectId` (its details;
   * undefined when there is none) and of whether the trail is empty, unless it makes
   * nothing: a change of state seen by several processes at once, such as replicas
   * starting with a new configuration, is recorded once, since each reads the latest
   * record under the chain's lock. True when it recorded.
   */
  async recordChange(
    event: AuditEventName,
    subjectId: string,
    decide: (
      latest: Record<string, unknown> | undefined,
      trail: { empty: boolean },
    ) => AuditRecord | undefined,
  ): Promise<boolean> {
    return this.transaction(async (manager, record) => {
      const query = managerQuery(manager);
      await lockChain(query);
      const change = decide(await latestDetails(query, event, subjectId), {
        empty: await trailIsEmpty(query),
      });
      if (change) await record(change);
      return change !== undefined;
    });
  }
}
