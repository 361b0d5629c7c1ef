import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The worker now claims each subscription's due deliveries separately (at most
 * WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION in flight each), oldest first: this index holds
 * them so, and replaces the one on the due time alone, which nothing reads any more.
 */
export class IndexDueDeliveriesBySubscription1764000000000 implements MigrationInterface {
  name = 'IndexDueDeliveriesBySubscription1764000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE INDEX webhook_deliveries_due_by_subscription_idx
      ON webhook_deliveries (subscription_id, next_attempt_at) WHERE status = 'pending'`);
    await queryRunner.query('DROP INDEX webhook_deliveries_due_idx');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at)
      WHERE status = 'pending'`);
    await queryRunner.query('DROP INDEX webhook_deliveries_due_by_subscription_idx');
  }
}
