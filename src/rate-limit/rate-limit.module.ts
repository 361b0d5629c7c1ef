import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ThrottlerModule } from '@nestjs/throttler';
import { AppConfig } from '../config/app-config.js';
import { RateLimitGuard } from './rate-limit.guard.js';

const MINUTE_MS = 60_000;

/**
 * RATE_LIMIT_PER_MINUTE per token (0: off), counted in this process's memory: behind
 * several instances each keeps its own count, so exact limits need a shared store.
 * Over the limit: 429 with Retry-After (seconds) and X-RateLimit-* headers.
 */
@Module({
  imports: [
    ThrottlerModule.forRootAsync({
      inject: [AppConfig],
      useFactory: ({ rateLimitPerMinute }: AppConfig) => ({
        throttlers: [{ ttl: MINUTE_MS, limit: rateLimitPerMinute }],
        skipIf: () => rateLimitPerMinute === 0,
        errorMessage: (_context, { limit, timeToBlockExpire }) =>
          `too many requests: the limit is ${limit} a minute; retry in ${timeToBlockExpire} s`,
      }),
    }),
  ],
  // One guard for Nest's routes and for those Fastify serves itself (rateLimitFastifyRoutes).
  providers: [RateLimitGuard, { provide: APP_GUARD, useExisting: RateLimitGuard }],
  exports: [RateLimitGuard],
})
export class RateLimitModule {}
