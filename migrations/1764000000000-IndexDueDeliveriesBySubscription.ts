import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently } from '../src/database/concurrent-index.js';

/**
 * The worker now claims each subscription's due deliveries separately (at most
 * WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION in flight each), oldest first: this index holds
 * them so, and replaces the one on the due time alone, which nothing reads any more. Both
 * built and dropped concurrently, outside a transaction, so that deliveries go on being
 * written meanwhile; each step can be run again. Databases that applied this migration
 * when it ran in a transaction do not run it again; the indexes are the same.
 */
export class IndexDueDeliveriesBySubscription1764000000000 implements MigrationInterface {
  name = 'IndexDueDeliveriesBySubscription1764000000000';
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    await createIndexConcurrently(
      queryRunner,
      'webhook_deliveries_due_by_subscription_idx',
      "webhook_deliveries (subscription_id, next_attempt_at) WHERE status = 'pending'",
    );
    await queryRunner.query('DROP INDEX CONCURRENTLY IF EXISTS webhook_deliveries_due_idx');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await createIndexConcurrently(
      queryRunner,
      'webhook_deliveries_due_idx',
      "webhook_deliveries (next_attempt_at) WHERE status = 'pending'",
    );
    await queryRunner.query(
      'DROP INDEX CONCURRENTLY IF EXISTS webhook_deliveries_due_by_subscription_idx',
    );
  }
}
