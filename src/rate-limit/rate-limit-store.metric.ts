import { Inject, Injectable, Optional } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { AppConfig } from '../config/app-config.js';
import { MetricsService } from '../metrics/metrics.service.js';
import type { RateLimitStore } from './rate-limit-store-switch.js';
import type { SharedRateLimitStorage } from './shared-rate-limit.storage.js';

export const SHARED_STORAGE = Symbol('SharedRateLimitStorage');

const STORES: RateLimitStore[] = ['redis', 'memory'];

/**
 * `rate_limit_store{store}`: 1 for the store counting requests now, 0 for the other
 * (both 0 when the rate limit is off). `memory` with REDIS_URL set means Redis does not
 * answer and each replica counts alone.
 */
@Injectable()
export class RateLimitStoreMetric {
  constructor(
    metrics: MetricsService,
    { rateLimitPerMinute }: AppConfig,
    @Optional() @Inject(SHARED_STORAGE) shared?: SharedRateLimitStorage,
  ) {
    new Gauge({
      name: 'rate_limit_store',
      help: 'Where the rate limit is counted now: 1 for that store (redis or memory), 0 for the other',
      labelNames: ['store'],
      registers: [metrics.registry],
      collect() {
        const counting = rateLimitPerMinute === 0 ? undefined : (shared?.store ?? 'memory');
        for (const store of STORES) this.set({ store }, store === counting ? 1 : 0);
      },
    });
  }
}
