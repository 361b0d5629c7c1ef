import type { DatabaseSchema } from '../database/database-schema.js';
import { WebhookDelivery } from './entities/webhook-delivery.entity.js';
import { WebhookEvent } from './entities/webhook-event.entity.js';
import { WebhookSubscription } from './entities/webhook-subscription.entity.js';
import { CreateWebhooks1763900000000 } from '../../migrations/1763900000000-CreateWebhooks.js';
import { IndexDueDeliveriesBySubscription1764000000000 } from '../../migrations/1764000000000-IndexDueDeliveriesBySubscription.js';
import { DisableFailingWebhooks1764100000000 } from '../../migrations/1764100000000-DisableFailingWebhooks.js';
import { TraceWebhookDeliveries1764200000000 } from '../../migrations/1764200000000-TraceWebhookDeliveries.js';
import { RotateWebhookSecrets1764300000000 } from '../../migrations/1764300000000-RotateWebhookSecrets.js';
import { EncryptWebhookSecrets1764300000001 } from '../../migrations/1764300000001-EncryptWebhookSecrets.js';
import { BindWebhookSecretsToRows1795888183996 } from '../../migrations/1795888183996-BindWebhookSecretsToRows.js';
import { IndexSettledDeliveries1795888513473 } from '../../migrations/1795888513473-IndexSettledDeliveries.js';
import { VacuumDeliveriesOften1795889500001 } from '../../migrations/1795889500001-VacuumDeliveriesOften.js';
import { OwnDeliveryLeases1795890000000 } from '../../migrations/1795890000000-OwnDeliveryLeases.js';

/** Subscriptions, the outbox of new-plant events, and their deliveries. */
export const WEBHOOKS_SCHEMA: DatabaseSchema = {
  entities: [WebhookSubscription, WebhookEvent, WebhookDelivery],
  migrations: [
    CreateWebhooks1763900000000,
    IndexDueDeliveriesBySubscription1764000000000,
    DisableFailingWebhooks1764100000000,
    TraceWebhookDeliveries1764200000000,
    RotateWebhookSecrets1764300000000,
    EncryptWebhookSecrets1764300000001,
    BindWebhookSecretsToRows1795888183996,
    IndexSettledDeliveries1795888513473,
    VacuumDeliveriesOften1795889500001,
    OwnDeliveryLeases1795890000000,
  ],
};
