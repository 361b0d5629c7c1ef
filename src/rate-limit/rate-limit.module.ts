import { Module } from '@nestjs/common';
import { ThrottlerModule } from '@nestjs/throttler';
import { AppConfig } from '../config/app-config.js';
import { RateLimitGuard } from './rate-limit.guard.js';
import { SharedRateLimitStorage } from './shared-rate-limit.storage.js';

const MINUTE_MS = 60_000;

/** The counts in Redis when REDIS_URL is set; none: the throttler's own, in memory. */
@Module({
  providers: [
    {
      provide: SharedRateLimitStorage,
      inject: [AppConfig],
      useFactory: ({ redisUrl }: AppConfig) =>
        redisUrl === undefined ? undefined : SharedRateLimitStorage.connect(redisUrl),
    },
  ],
  exports: [SharedRateLimitStorage],
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
      inject: [AppConfig, SharedRateLimitStorage],
      useFactory: ({ rateLimitPerMinute }: AppConfig, storage?: SharedRateLimitStorage) => ({
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
