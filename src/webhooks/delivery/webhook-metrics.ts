import { Injectable } from '@nestjs/common';
import { Counter, Histogram } from 'prom-client';
import { databaseGauge } from '../../metrics/database-gauge.js';
import { MetricsService } from '../../metrics/metrics.service.js';
import { WebhooksRepository } from '../webhooks.repository.js';

/**
 * Seconds from a plant's create to a receiver's 2xx: the first attempt's milliseconds
 * (docs/guarantees.md: p99 under 0.1 s), then the retries' back-off (10 s, 30 s, 90 s…)
 * up to the last attempt, about a day later.
 */
const LATENCY_BUCKETS = [
  0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21_600, 86_400,
];

/** The webhook deliveries in the service's Prometheus metrics (GET /metrics). */
@Injectable()
export class WebhookMetrics {
  readonly sent: Counter;
  readonly retried: Counter;
  readonly failed: Counter;
  readonly latency: Histogram;

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
    // One series, whatever the subscriptions: their count is the users' to choose.
    this.latency = new Histogram({
      name: 'webhook_delivery_latency_seconds',
      help: "Time from a plant's create to a receiver's 2xx for its delivery, retries included",
      buckets: LATENCY_BUCKETS,
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
    databaseGauge(
      metrics.registry,
      {
        name: 'webhook_subscription_failing_seconds',
        help: 'How long the enabled webhook subscription failing longest has failed every attempt; 0 when none fails',
      },
      async () => [{ labels: {}, value: await webhooks.longestFailingSeconds() }],
    );
  }
}
