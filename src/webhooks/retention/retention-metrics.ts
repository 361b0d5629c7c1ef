import { Injectable } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { AppConfig } from '../../config/app-config.js';
import { MetricsService } from '../../metrics/metrics.service.js';

/** The retention sweep in the service's Prometheus metrics (GET /metrics). */
@Injectable()
export class RetentionMetrics {
  readonly removed: Counter<'table'>;
  readonly lastSuccess: Gauge;

  constructor(metrics: MetricsService, config: AppConfig) {
    this.removed = new Counter({
      name: 'retention_rows_removed_total',
      help: 'Rows the retention sweep of this process removed because they outlived their retention, by table',
      labelNames: ['table'],
      registers: [metrics.registry],
    });
    // Shown at 0 from the start, so that a rate over it exists before the first removal.
    this.removed.inc({ table: 'webhook_deliveries' }, 0);
    this.lastSuccess = new Gauge({
      name: 'retention_sweep_last_success_timestamp_seconds',
      help: 'Unix time at which the last retention sweep of this process finished; 0 until one has',
      // Kept forever, nothing is swept: no time to go stale, and no alert on it.
      registers: config.webhookDeliveryRetentionMs === null ? [] : [metrics.registry],
    });
  }
}
