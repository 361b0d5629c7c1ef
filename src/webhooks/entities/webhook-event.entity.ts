import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/**
 * A new plant, to be sent to every subscription (the outbox): written by the statement
 * that stores the plant, one row whatever the number of subscriptions, and turned into
 * one delivery per subscription by the delivery worker.
 */
@Entity({ name: 'webhook_events' })
export class WebhookEvent {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id: string;

  /** The body, exactly as it is sent and signed. */
  @Column({ type: 'text' })
  payload: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  /** The create's W3C `traceparent`, which its deliveries continue; null when not traced. */
  @Column({ name: 'trace_context', type: 'text', nullable: true })
  traceContext: string | null;
}
