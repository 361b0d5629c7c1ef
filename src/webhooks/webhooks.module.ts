import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditModule } from '../audit/audit.module.js';
import { AppConfig } from '../config/app-config.js';
import { DatabaseNotificationsModule } from '../database/database-notifications.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { PlantsModule } from '../plants/plants.module.js';
import { WebhookDeliveryWorker } from './delivery/webhook-delivery.worker.js';
import { WebhookMetrics } from './delivery/webhook-metrics.js';
import { WebhookSubscription } from './entities/webhook-subscription.entity.js';
import { ReceiverAddressPolicy } from './receiver-address.js';
import { DeliveryRetentionService } from './retention/delivery-retention.service.js';
import { RetentionMetrics } from './retention/retention-metrics.js';
import { WebhookSecretKeyring } from './secrets/webhook-secret-keyring.js';
import { WebhookSecretsCheck } from './secrets/webhook-secrets.check.js';
import { WebhooksController } from './webhooks.controller.js';
import { WebhooksRepository } from './webhooks.repository.js';
import { WebhooksService } from './webhooks.service.js';

/**
 * The new-plant webhook: subscriptions (POST/GET/DELETE /webhooks), the outbox event each
 * new plant writes with itself, the worker that delivers them, and the sweep that removes
 * them once they have outlived their retention.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([WebhookSubscription]),
    PlantsModule,
    MetricsModule,
    DatabaseNotificationsModule,
    AuditModule,
  ],
  controllers: [WebhooksController],
  providers: [
    WebhooksService,
    WebhooksRepository,
    WebhookDeliveryWorker,
    WebhookMetrics,
    DeliveryRetentionService,
    RetentionMetrics,
    WebhookSecretsCheck,
    { provide: WebhookSecretKeyring, inject: [AppConfig], useFactory: WebhookSecretKeyring.load },
    {
      provide: ReceiverAddressPolicy,
      inject: [AppConfig],
      useFactory: ({ webhookAllowedHosts, webhookTimeoutMs }: AppConfig) =>
        new ReceiverAddressPolicy(webhookAllowedHosts, webhookTimeoutMs),
    },
  ],
})
export class WebhooksModule {}
