import type { MigrationInterface, QueryRunner } from 'typeorm';
import { AppConfig } from '../src/config/app-config.js';
import { sealStoredSecrets } from '../src/webhooks/secrets/seal-stored-secrets.js';
import { WebhookSecretKeyring } from '../src/webhooks/secrets/webhook-secret-keyring.js';

/** The keys of the process running the migration: the service's or the migration CLI's. */
const keyring = () => WebhookSecretKeyring.load(AppConfig.fromEnvironment());

/**
 * Webhook signing secrets encrypted at rest (AES-256-GCM under WEBHOOK_SECRET_KEYS):
 * `secret_encrypted`, filled here for every existing subscription, and the previous
 * secrets of rotations encrypted in place. Expand and contract: the release before reads
 * `secret` in clear and signs with it, during a rollout and after a rollback, so this
 * leaves it; `secret` becomes nullable, as this release stores no clear copy, and
 * `npm run webhook-secrets -- re-encrypt` erases the old ones once that release is gone
 * (docs/operations/webhooks.md). A few rows, one per receiver: updated in one transaction.
 */
export class EncryptWebhookSecrets1764300000001 implements MigrationInterface {
  name = 'EncryptWebhookSecrets1764300000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE webhook_subscriptions ADD COLUMN secret_encrypted text');
    await queryRunner.query('ALTER TABLE webhook_subscriptions ALTER COLUMN secret DROP NOT NULL');
    await sealStoredSecrets((sql, parameters) => queryRunner.query(sql, parameters), keyring, {
      clearPlaintext: false,
    });
  }

  /**
   * Writes every secret back in clear, where the schema before expects it. `secret` stays
   * nullable: setting NOT NULL again would block reads while the table is scanned, and the
   * release before writes no null.
   */
  async down(queryRunner: QueryRunner): Promise<void> {
    const rows = (await queryRunner.query(
      `SELECT id, secret_encrypted, previous_secret, previous_secret_expires_at
       FROM webhook_subscriptions
       WHERE secret IS NULL OR previous_secret IS NOT NULL FOR UPDATE`,
    )) as {
      id: string;
      secret_encrypted: string | null;
      previous_secret: string | null;
      previous_secret_expires_at: Date | null;
    }[];
    for (const row of rows) {
      const keys = keyring();
      await queryRunner.query(
        `UPDATE webhook_subscriptions
         SET secret = coalesce(secret, $2), previous_secret = $3 WHERE id = $1`,
        [
          row.id,
          row.secret_encrypted === null
            ? null
            : keys.decryptToReseal(row.secret_encrypted, {
                subscriptionId: row.id,
                column: 'secret_encrypted',
              }),
          row.previous_secret === null
            ? null
            : keys.decryptToReseal(row.previous_secret, {
                subscriptionId: row.id,
                column: 'previous_secret',
                expiresAt: row.previous_secret_expires_at,
              }),
        ],
      );
    }
    await queryRunner.query('ALTER TABLE webhook_subscriptions DROP COLUMN secret_encrypted');
  }
}
