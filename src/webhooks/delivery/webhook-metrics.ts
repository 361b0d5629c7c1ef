import { Injectable } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { MetricsService } from '../../metrics/metrics.service.js';
import { WebhooksRepository } from '../webhooks.repository.js';

/**
 * The queue's age and the disabled subscriptions are read from the database at most this
 * often, however often /metrics is scraped (it is public): under a backlog the age's
 * query scans the pending deliveries.
 */
const DATABASE_READ_TTL_MS = 5_000;

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
    databaseGauge(
      'webhook_queue_age_seconds',
      'Age of the oldest webhook delivery not sent yet; 0 when none waits',
      () => webhooks.queueAgeSeconds(),
    );
    databaseGauge(
      'webhook_subscriptions_disabled',
      'Webhook subscriptions disabled because every attempt failed for WEBHOOK_DISABLE_AFTER_FAILING_MS',
      () => webhooks.disabledCount(),
    );
    function databaseGauge(name: string, help: string, read: () => Promise<number>): void {
      let readUntil = 0;
      new Gauge({
        name,
        help,
        registers,
        // A database that does not answer leaves the last value.
        async collect() {
          if (Date.now() < readUntil) return;
          readUntil = Date.now() + DATABASE_READ_TTL_MS;
          const value = await read().catch(() => undefined);
          if (value !== undefined) this.set(value);
        },
      });
    }
  }
}
