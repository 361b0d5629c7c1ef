import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook subscriptions; the outbox of events the plants' insert statement writes (one row
 * per new plant, whatever the number of subscriptions); and the deliveries the worker
 * makes of each event, one per subscription, and sends.
 */
export class CreateWebhooks1763900000000 implements MigrationInterface {
  name = 'CreateWebhooks1763900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE webhook_subscriptions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        url varchar(2048) NOT NULL,
        description varchar(255),
        secret varchar(64) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_attempt_at timestamptz,
        last_status integer,
        last_error varchar(255),
        failures_in_a_row integer NOT NULL DEFAULT 0
      )`);
    await queryRunner.query(`
      CREATE TABLE webhook_events (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        payload text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE webhook_deliveries (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        message_id uuid NOT NULL DEFAULT gen_random_uuid(),
        subscription_id uuid NOT NULL
          CONSTRAINT webhook_deliveries_subscription_id_fkey
          REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
        payload text NOT NULL,
        status varchar(9) NOT NULL DEFAULT 'pending',
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        created_at timestamptz NOT NULL,
        delivered_at timestamptz
      )`);
    // The worker's one question: which pending deliveries are due.
    await queryRunner.query(`
      CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at)
      WHERE status = 'pending'`);
    // Redeliver: one subscription's failed deliveries; and the cascade of a DELETE.
    await queryRunner.query(`
      CREATE INDEX webhook_deliveries_subscription_idx
      ON webhook_deliveries (subscription_id, status)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE webhook_deliveries');
    await queryRunner.query('DROP TABLE webhook_events');
    await queryRunner.query('DROP TABLE webhook_subscriptions');
  }
}
