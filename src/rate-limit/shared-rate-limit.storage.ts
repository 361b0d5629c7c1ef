import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/** Every key this service writes to Redis starts with this. */
const KEY_PREFIX = 'plant-store:rate-limit';

/**
 * The rate limit's counts in Redis (REDIS_URL), shared by every replica, through
 * rate-limiter-flexible: an atomic increment-with-expiry per key and fixed windows of
 * the throttler's ttl. While Redis is unreachable each replica counts in its own memory
 * (rate-limiter-flexible's insurance limiter) instead of failing requests: the limit is
 * then per replica, as without Redis, until Redis is back.
 */
export class SharedRateLimitStorage implements ThrottlerStorage, OnApplicationShutdown {
  /** One limiter per limit and window; the API has one, tests may have more. */
  private readonly limiters = new Map<string, RateLimiterRedis>();

  constructor(private readonly redis: Redis) {}

  static connect(redisUrl: string): SharedRateLimitStorage {
    // No offline queue and one try per command: a request waits for Redis at most as
    // long as one round trip, and an outage falls back to memory at once.
    const redis = new Redis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    // ioredis reconnects on its own; say so once per outage, not once per attempt.
    const logger = new Logger('RateLimit');
    let reachable = true;
    redis.on('error', (error: Error) => {
      if (reachable) logger.warn(`Redis unreachable (${error.message}): counting in memory`);
      reachable = false;
    });
    redis.on('ready', () => {
      if (!reachable) logger.log('Redis reachable again: counting in Redis');
      reachable = true;
    });
    return new SharedRateLimitStorage(redis);
  }

  async increment(
    key: string,
    ttlMs: number,
    limit: number,
    blockDurationMs: number,
  ): Promise<ThrottlerStorageRecord> {
    const limiter = this.limiterFor(ttlMs, limit, blockDurationMs);
    try {
      const counted = await limiter.consume(key);
      return {
        totalHits: counted.consumedPoints,
        timeToExpire: Math.ceil(counted.msBeforeNext / 1000),
        isBlocked: false,
        timeToBlockExpire: 0,
      };
    } catch (refusal) {
      if (!(refusal instanceof RateLimiterRes)) throw refusal;
      const secondsLeft = Math.ceil(refusal.msBeforeNext / 1000);
      return {
        totalHits: refusal.consumedPoints,
        timeToExpire: secondsLeft,
        isBlocked: true,
        timeToBlockExpire: secondsLeft,
      };
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  private limiterFor(ttlMs: number, limit: number, blockDurationMs: number): RateLimiterRedis {
    const name = `${limit}:${ttlMs}:${blockDurationMs}`;
    let limiter = this.limiters.get(name);
    if (!limiter) {
      const options = {
        points: limit,
        duration: ttlMs / 1000,
        blockDuration: blockDurationMs / 1000,
      };
      limiter = new RateLimiterRedis({
        ...options,
        storeClient: this.redis,
        keyPrefix: `${KEY_PREFIX}:${name}`,
        rejectIfRedisNotReady: true,
        insuranceLimiter: new RateLimiterMemory(options),
      });
      this.limiters.set(name, limiter);
    }
    return limiter;
  }
}
