import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * One act of management, as the audit trail keeps it: written once, never changed
 * (a trigger refuses UPDATE, DELETE and TRUNCATE), never holding a secret, and chained to
 * the row before it by a hash the database computes (src/audit/chain/audit-chain.ts).
 */
@Entity({ name: 'audit_events' })
@Index('audit_events_subject_idx', ['subjectType', 'subjectId', 'occurredAt'])
export class AuditEvent {
  /** The chain's trigger gives the id after the last row's: ids follow commit order, with no gap. */
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id: string;

  /**
   * The time of the transaction that made the change and wrote this record, or the row
   * before's if that is later: times never go back along the chain.
   */
  @CreateDateColumn({ name: 'occurred_at', type: 'timestamptz' })
  occurredAt: Date;

  /** What happened, e.g. `token.rotated` (see AuditEventName). */
  @Column({ type: 'varchar', length: 64 })
  event: string;

  /** `api_token` or `webhook_subscription`. */
  @Column({ name: 'subject_type', type: 'varchar', length: 32 })
  subjectType: string;

  /** The token's or subscription's id; not a foreign key, so a deletion keeps its history. */
  @Column({ name: 'subject_id', type: 'varchar', length: 100 })
  subjectId: string;

  /** Who did it: `token:<name>` or `cli:<OS user>` (see Actor). */
  @Column({ type: 'varchar', length: 300 })
  actor: string;

  /** The acting token's id (its name may be reused once it is revoked); null for the CLI. */
  @Column({ name: 'actor_token_id', type: 'uuid', nullable: true })
  actorTokenId: string | null;

  /** What else tells the event apart (names, scopes, times, counts); never a secret. */
  @Column({ type: 'jsonb', default: {} })
  details: Record<string, unknown>;

  /** The hash of the row before it in the chain; set by the database's trigger, never by a writer. */
  @Column({ name: 'previous_hash', type: 'bytea', nullable: true, insert: false, update: false })
  previousHash: Buffer | null;

  /** SHA-256 over `previousHash` and this row's canonical form; set by the database's trigger. */
  @Column({ type: 'bytea', nullable: true, insert: false, update: false })
  hash: Buffer | null;
}
