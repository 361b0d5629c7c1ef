import type { MigrationInterface, QueryRunner } from 'typeorm';
import { AppConfig } from '../src/config/app-config.js';
import { sealStoredSecrets } from '../src/webhooks/secrets/seal-stored-secrets.js';
import { WebhookSecretKeyring } from '../src/webhooks/secrets/webhook-secret-keyring.js';

/** The keys of the process running the migration: the service's or the migration CLI's. */
const keyring = () => WebhookSecretKeyring.load(AppConfig.fromEnvironment());

/**
 * Webhook secrets sealed for their place: each ciphertext is sealed again (format v2)
 * with its subscription's id and its column as associated data, and a previous secret
 * with its end too, so that one copied to another subscription or column, or whose end
 * was moved, no longer opens. A previous secret whose overlap has ended is erased. The
 * clear `secret` that release 1.0.0 signs with is left as it is (expand and contract).
 * A few rows, one per receiver: updated in one transaction.
 */
export class BindWebhookSecretsToRows1795888183996 implements MigrationInterface {
  name = 'BindWebhookSecretsToRows1795888183996';

  async up(queryRunner: QueryRunner): Promise<void> {
    await sealStoredSecrets((sql, parameters) => queryRunner.query(sql, parameters), keyring, {
      clearPlaintext: false,
    });
  }

  /**
   * Nothing to undo in the schema. The v2 ciphertexts stay: the migration before this one
   * reads them when it is reverted too, and release 1.0.0 signs with the clear copies.
   */
  async down(): Promise<void> {}
}
