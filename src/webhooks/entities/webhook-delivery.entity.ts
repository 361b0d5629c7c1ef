import {
  Column,
  Entity,
  Generated,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
} from 'typeorm';
import { WebhookSubscription } from './webhook-subscription.entity.js';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/**
 * One event for one subscription, made by the delivery worker from a WebhookEvent and
 * sent until the receiver answers 2xx or the attempts run out.
 */
@Entity({ name: 'webhook_deliveries' })
@Index('webhook_deliveries_due_by_subscription_idx', ['subscriptionId', 'nextAttemptAt'], {
  where: "status = 'pending'",
})
@Index('webhook_deliveries_subscription_idx', ['subscriptionId', 'status'])
@Index('webhook_deliveries_settled_idx', ['createdAt'], { where: "status <> 'pending'" })
export class WebhookDelivery {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id: string;

  /** The `webhook-id` every attempt carries, so that a receiver can drop repeats. */
  @Column({ name: 'message_id', type: 'uuid' })
  @Generated('uuid')
  messageId: string;

  @Column({ name: 'subscription_id', type: 'uuid' })
  subscriptionId: string;

  /** Deleting a subscription deletes its deliveries, sent or not. */
  @ManyToOne(() => WebhookSubscription, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({
    name: 'subscription_id',
    foreignKeyConstraintName: 'webhook_deliveries_subscription_id_fkey',
  })
  subscription?: WebhookSubscription;

  /** The body, exactly as it is sent and signed. */
  @Column({ type: 'text' })
  payload: string;

  @Column({ type: 'varchar', length: 9, default: 'pending' })
  status: DeliveryStatus;

  @Column({ type: 'integer', default: 0 })
  attempts: number;

  @Column({ name: 'next_attempt_at', type: 'timestamptz', default: () => 'now()' })
  nextAttemptAt: Date;

  /** The process whose claim holds the lease until next_attempt_at; null once recorded. */
  @Column({ name: 'lease_owner', type: 'uuid', nullable: true })
  leaseOwner: string | null;

  /** The event's: when the plant was created. */
  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'delivered_at', type: 'timestamptz', nullable: true })
  deliveredAt: Date | null;

  /** The event's: the trace each attempt's span joins; null when the create was not traced. */
  @Column({ name: 'trace_context', type: 'text', nullable: true })
  traceContext: string | null;
}
