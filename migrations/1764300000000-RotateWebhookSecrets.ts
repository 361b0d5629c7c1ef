import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A rotated subscription keeps its previous secret until the overlap ends, and every
 * delivery meanwhile is signed with both. Nullable without a default: adding the columns
 * rewrites no row, and the previous release, which never names them, is unaffected.
 */
export class RotateWebhookSecrets1764300000000 implements MigrationInterface {
  name = 'RotateWebhookSecrets1764300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE webhook_subscriptions ADD COLUMN previous_secret text');
    await queryRunner.query(
      'ALTER TABLE webhook_subscriptions ADD COLUMN previous_secret_expires_at timestamptz',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'ALTER TABLE webhook_subscriptions DROP COLUMN previous_secret_expires_at',
    );
    await queryRunner.query('ALTER TABLE webhook_subscriptions DROP COLUMN previous_secret');
  }
}
