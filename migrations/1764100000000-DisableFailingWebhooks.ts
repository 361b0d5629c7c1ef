import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A subscription whose every attempt has failed for WEBHOOK_DISABLE_AFTER_FAILING_MS is
 * disabled: `failing_since` is its first failed attempt since the last success, and
 * `disabled_at` when it was disabled. A subscription failing already starts its window at
 * its last attempt (when its failures began is not known), so none is disabled early.
 */
export class DisableFailingWebhooks1764100000000 implements MigrationInterface {
  name = 'DisableFailingWebhooks1764100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE webhook_subscriptions
        ADD COLUMN failing_since timestamptz,
        ADD COLUMN disabled_at timestamptz`);
    await queryRunner.query(`
      UPDATE webhook_subscriptions SET failing_since = last_attempt_at
      WHERE failures_in_a_row > 0`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE webhook_subscriptions DROP COLUMN failing_since, DROP COLUMN disabled_at`);
  }
}
