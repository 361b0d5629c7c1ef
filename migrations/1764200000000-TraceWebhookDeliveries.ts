import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each event, and each delivery made of it, keeps the W3C `traceparent` of the create
 * that produced it, so that every attempt is a span of that create's trace, from any
 * replica and after a restart; null when the create was not traced. Nullable without a
 * default: adding the columns rewrites no row.
 */
export class TraceWebhookDeliveries1764200000000 implements MigrationInterface {
  name = 'TraceWebhookDeliveries1764200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE webhook_events ADD COLUMN trace_context text');
    await queryRunner.query('ALTER TABLE webhook_deliveries ADD COLUMN trace_context text');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE webhook_deliveries DROP COLUMN trace_context');
    await queryRunner.query('ALTER TABLE webhook_events DROP COLUMN trace_context');
  }
}
