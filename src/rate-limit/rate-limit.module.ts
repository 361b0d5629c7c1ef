import { Module } from '@nestjs/common';
import { ThrottlerModule, type ThrottlerStorage } from '@nestjs/throttler';
import { AppConfig } from '../config/app-config.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { RateLimitStoreMetric, SHARED_STORAGE } from './rate-limit-store.metric.js';
import { RateLimitGuard } from './rate-limit.guard.js';

const MINUTE_MS = 60_000;

/**
 * The counts in Redis when REDIS_URL is set; none: the throttler's own, in memory. The
 * Redis client and its limiters are loaded only then, so a service without Redis never
 * pays for them at start or in memory.
 */
@Module({
  imports: [MetricsModule],
  providers: [
    {
      provide: SHARED_STORAGE,
      inject: [AppConfig],
      useFactory: async ({ redisUrl, redisCommandTimeoutMs }: AppConfig) => {
        if (redisUrl === undefined) return undefined;
        const { SharedRateLimitStorage } = await import('./shared-rate-limit.storage.js');
        return SharedRateLimitStorage.connect(redisUrl, redisCommandTimeoutMs);
      },
    },
    RateLimitStoreMetric,
  ],
  exports: [SHARED_STORAGE],
})
class RateLimitStorageModule {}

/**
 * RATE_LIMIT_PER_MINUTE per token (0: off), counted in Redis and so shared by every
 * replica when REDIS_URL is set, else in this process's memory (each replica then
 * counts alone). Over the limit: 429 with Retry-After (seconds) and X-RateLimit-* headers.
 */
@Module({
  imports: [
    ThrottlerModule.forRootAsync({
      imports: [RateLimitStorageModule],
      inject: [AppConfig, SHARED_STORAGE],
      useFactory: ({ rateLimitPerMinute }: AppConfig, storage?: ThrottlerStorage) => ({
        throttlers: [{ ttl: MINUTE_MS, limit: rateLimitPerMinute }],
        storage,
        skipIf: () => rateLimitPerMinute === 0,
        errorMessage: (_context, { limit, timeToBlockExpire }) =>
          `too many requests: the limit is ${limit} a minute; retry in ${timeToBlockExpire} s`,
      }),
    }),
  ],
  // One guard for Nest's routes (made global by AppModule, after authentication) and for
  // those Fastify serves itself (rateLimitFastifyRoutes).
  providers: [RateLimitGuard],
  exports: [RateLimitGuard],
})
export class RateLimitModule {}
