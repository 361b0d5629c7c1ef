import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { AuditTrail } from '../../audit/audit-trail.js';
import { StartRefusedError } from '../../config/refuse-start.js';
import { isSchemaNotMigratedYet } from '../../database/database-errors.js';
import { WebhooksRepository } from '../webhooks.repository.js';
import { SecretKeyError, WebhookSecretKeyring } from './webhook-secret-keyring.js';
import { CONFIGURED_KEYS, keysChanged } from './webhook-secrets-events.js';

const AT_REST_DOCS = 'docs/operations/webhooks.md#webhook-secrets-at-rest';

/**
 * At start, after the migrations: one stored secret per key id must decrypt where it is
 * stored, or the service refuses to start, rather than serving and failing every delivery.
 * A wrong key under the right id fails too: AES-GCM authenticates. Clear secrets left by
 * the release before encryption are reported; once the contract step has retired them,
 * none signs. Then key ids other than the latest recorded are recorded in the audit trail
 * (webhook_secrets.keys_changed), once however many replicas start with them.
 */
@Injectable()
export class WebhookSecretsCheck implements OnApplicationBootstrap {
  private readonly logger = new Logger('WebhookSecrets');

  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly keyring: WebhookSecretKeyring,
    private readonly audit: AuditTrail,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { sealed, clearSecrets, clearSecretsRetired } = await this.webhooks.secretsAtRest();
    for (const { ciphertext, place } of sealed) {
      try {
        this.keyring.decrypt(ciphertext, place);
      } catch (error) {
        if (!(error instanceof SecretKeyError)) throw error;
        throw new StartRefusedError(
          `Refusing to start: ${error.message} (subscription ${place.subscriptionId}); start with the key they were encrypted with in WEBHOOK_SECRET_KEYS (on the embedded database, the file webhook-secret.key in DATA_DIR), see ${AT_REST_DOCS}`,
        );
      }
    }
    if (clearSecretsRetired) {
      this.webhooks.refuseClearSecrets();
      if (clearSecrets > 0) {
        this.logger.error(
          `${clearSecrets} webhook subscription(s) hold a secret in clear although webhook-secrets re-encrypt retired clear secrets: they are not used to sign; someone with the database's owner credentials wrote them (${AT_REST_DOCS})`,
        );
      }
    } else if (clearSecrets > 0) {
      this.logger.warn(
        `${clearSecrets} webhook subscription(s) still hold a secret in clear, for replicas of release 1.0.0: once none runs, run npm run webhook-secrets -- re-encrypt (${AT_REST_DOCS})`,
      );
    }
    await this.recordKeyIds();
  }

  /**
   * The start goes on without the record when the database refuses it (it takes no
   * writes, say): the next start that can write records the change, which is still one.
   * A schema a job has still to migrate has no trail yet.
   */
  private async recordKeyIds(): Promise<void> {
    const { keyIds } = this.keyring;
    try {
      await this.audit.recordChange(
        'webhook_secrets.keys_changed',
        CONFIGURED_KEYS,
        (latest, trail) => keysChanged(keyIds, latest, trail),
      );
    } catch (error) {
      if (isSchemaNotMigratedYet(error)) return;
      this.logger.warn(
        `the audit trail could not record the WEBHOOK_SECRET_KEYS ids this process started with (${keyIds.join(', ')}): ${(error as Error).message}; the next start records them`,
      );
    }
  }
}
