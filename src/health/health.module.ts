import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { DatabaseWritesModule } from '../database/database-writes.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { ShutdownModule } from '../shutdown/shutdown.module.js';
import { HealthController } from './health.controller.js';
import { ReadinessMetric } from './readiness.metric.js';
import { ReadinessService } from './readiness.service.js';

@Module({
  // Failures are logged once, by the error filter.
  imports: [
    TerminusModule.forRoot({ logger: false }),
    ShutdownModule,
    DatabaseWritesModule,
    MetricsModule,
  ],
  controllers: [HealthController],
  providers: [ReadinessService, ReadinessMetric],
})
export class HealthModule {}
