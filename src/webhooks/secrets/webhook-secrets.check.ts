import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { StartRefusedError } from '../../config/refuse-start.js';
import { WebhooksRepository } from '../webhooks.repository.js';
import { SecretKeyError, WebhookSecretKeyring } from './webhook-secret-keyring.js';

/**
 * At start, after the migrations: one stored secret per key id must decrypt, or the
 * service refuses to start, rather than serving and failing every delivery. A wrong key
 * under the right id fails too: AES-GCM authenticates.
 */
@Injectable()
export class WebhookSecretsCheck implements OnApplicationBootstrap {
  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly keyring: WebhookSecretKeyring,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    for (const sealed of await this.webhooks.oneSecretPerKey()) {
      try {
        this.keyring.decrypt(sealed);
      } catch (error) {
        if (!(error instanceof SecretKeyError)) throw error;
        throw new StartRefusedError(
          `Refusing to start: ${error.message}; start with the key they were encrypted with in WEBHOOK_SECRET_KEYS (on the embedded database, the file webhook-secret.key in DATA_DIR), see docs/operations/webhooks.md#webhook-secrets-at-rest`,
        );
      }
    }
  }
}
