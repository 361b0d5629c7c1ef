import { Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import { databaseGauge } from '../../metrics/database-gauge.js';
import { MetricsService } from '../../metrics/metrics.service.js';
import { WebhooksRepository } from '../webhooks.repository.js';

/** The webhook deliveries in the service's Prometheus metrics (GET /metrics). */
@Injectable()
export class WebhookMetrics {
  readonly sent: Counter;
  readonly retried: Counter;
  readonly failed: Counter;

  constructor(metrics: MetricsService, webhooks: WebhooksRepository) {
    const registers = [metrics.registry];
    this.sent = new Counter({
      name: 'webhook_deliveries_sent_total',
      help: 'Webhook deliveries a receiver accepted (2xx)',
      registers,
    });
    this.retried = new Counter({
      name: 'webhook_deliveries_retried_total',
      help: 'Webhook delivery attempts that failed and will be tried again',
      registers,
    });
    this.failed = new Counter({
      name: 'webhook_deliveries_failed_total',
      help: 'Webhook deliveries given up after their last attempt (redeliver sends them again)',
      registers,
    });
    // Read at most every few seconds: under a backlog the age's query scans the pending deliveries.
    databaseGauge(
      metrics.registry,
      {
        name: 'webhook_queue_age_seconds',
        help: 'Age of the oldest webhook delivery not sent yet; 0 when none waits',
      },
      async () => [{ labels: {}, value: await webhooks.queueAgeSeconds() }],
    );
    databaseGauge(
      metrics.registry,
      {
        name: 'webhook_subscriptions_disabled',
        help: 'Webhook subscriptions disabled because every attempt failed for WEBHOOK_DISABLE_AFTER_FAILING_MS',
      },
      async () => [{ labels: {}, value: await webhooks.disabledCount() }],
    );
  }
}
