import { Injectable } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service.js';
import { ShutdownService } from '../shutdown/shutdown.service.js';
import { ReadinessService } from './readiness.service.js';

/**
 * `health_ready`: 1 while /health/ready would answer 200, 0 while it answers 503 (the
 * database did not answer in time, or the replica is draining). A replica that is not
 * ready still serves /metrics, so Prometheus sees what an orchestrator's probe sees,
 * without kube-state-metrics. It shares the probes' one check a second.
 */
@Injectable()
export class ReadinessMetric {
  constructor(metrics: MetricsService, readiness: ReadinessService, shutdown: ShutdownService) {
    new Gauge({
      name: 'health_ready',
      help: '1 while /health/ready answers 200; 0 while the database does not answer in time or the replica drains',
      registers: [metrics.registry],
      async collect() {
        const ready =
          !shutdown.isDraining &&
          (await readiness.check().then(
            () => true,
            () => false,
          ));
        this.set(ready ? 1 : 0);
      },
    });
  }
}
