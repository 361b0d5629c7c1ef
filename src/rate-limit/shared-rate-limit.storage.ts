import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import { Redis } from 'ioredis';
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
} from 'rate-limiter-flexible';
import { tracing } from '../common/tracing/tracing.js';
import { type RateLimitStore, RateLimitStoreSwitch } from './rate-limit-store-switch.js';
import { withinTime } from './within-time.js';

type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/** Every key this service writes to Redis starts with this. */
const KEY_PREFIX = 'plant-store:rate-limit';

/** The same limit and window, counted in Redis and, while Redis does not answer, in memory. */
interface Limiters {
  redis: RateLimiterRedis;
  memory: RateLimiterMemory;
}

/**
 * The rate limit's counts in Redis (REDIS_URL), shared by every replica, through
 * rate-limiter-flexible: an atomic increment-with-expiry per key and fixed windows of
 * the throttler's ttl. While Redis does not answer in time (down or frozen, see
 * RateLimitStoreSwitch) each replica counts in its own memory instead of failing or
 * holding requests: the limit is then per replica, as without Redis, until Redis is back.
 */
export class SharedRateLimitStorage
  implements ThrottlerStorage, OnApplicationBootstrap, OnApplicationShutdown
{
  /** Per limit and window; the API has one, tests may have more. */
  private readonly limiters = new Map<string, Limiters>();
  private readonly storeSwitch: RateLimitStoreSwitch;

  constructor(
    private readonly redis: Redis,
    private readonly commandTimeoutMs: number,
  ) {
    this.storeSwitch = new RateLimitStoreSwitch(redis, commandTimeoutMs);
  }

  static connect(redisUrl: string, commandTimeoutMs: number): SharedRateLimitStorage {
    // No offline queue and one try per command: a Redis that is down fails a count at
    // once rather than queueing it; one that does not answer is cut off by the switch.
    const redis = new Redis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    return new SharedRateLimitStorage(redis, commandTimeoutMs);
  }

  /** Where requests are counted now. */
  get store(): RateLimitStore {
    return this.storeSwitch.store;
  }

  onApplicationBootstrap(): void {
    this.storeSwitch.start();
  }

  async increment(
    key: string,
    ttlMs: number,
    limit: number,
    blockDurationMs: number,
  ): Promise<ThrottlerStorageRecord> {
    const limiters = this.limitersFor(ttlMs, limit, blockDurationMs);
    const shared = await this.storeSwitch.inRedis(() => count(limiters.redis, key));
    tracing().annotate({ 'plant_store.rate_limit.store': shared ? 'redis' : 'memory' });
    return shared ? shared.value : count(limiters.memory, key);
  }

  async onApplicationShutdown(): Promise<void> {
    this.storeSwitch.stop();
    // A frozen Redis never answers QUIT.
    const quit = this.redis.quit().catch(() => undefined);
    if (!(await withinTime(quit, this.commandTimeoutMs))) this.redis.disconnect();
  }

  private limitersFor(ttlMs: number, limit: number, blockDurationMs: number): Limiters {
    const name = `${limit}:${ttlMs}:${blockDurationMs}`;
    let limiters = this.limiters.get(name);
    if (!limiters) {
      const options = {
        points: limit,
        duration: ttlMs / 1000,
        blockDuration: blockDurationMs / 1000,
      };
      limiters = {
        redis: new RateLimiterRedis({
          ...options,
          storeClient: this.redis,
          keyPrefix: `${KEY_PREFIX}:${name}`,
          // Not connected: fail at once, and count in memory.
          rejectIfRedisNotReady: true,
        }),
        memory: new RateLimiterMemory(options),
      };
      this.limiters.set(name, limiters);
    }
    return limiters;
  }
}

/** Counts one request for `key`; over the limit is an answer too, not an error. */
async function count(limiter: RateLimiterAbstract, key: string): Promise<ThrottlerStorageRecord> {
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
