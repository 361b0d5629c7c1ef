import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { withinTime } from './within-time.js';

/** Where the rate limit is counted: in Redis, shared by every replica, or in this process. */
export type RateLimitStore = 'redis' | 'memory';

/** After Redis refused a probe, the wait before the next: ioredis reconnects meanwhile. */
const PROBE_PAUSE_MS = 100;

/**
 * Decides whether a request is counted in Redis or in memory. A count Redis does not
 * answer within REDIS_COMMAND_TIMEOUT_MS (frozen, overloaded, a network that drops
 * packets) or refuses (down) is counted in memory, and so is every request after it
 * until Redis answers a PING in time again: only the requests under way when Redis
 * stops answering wait for it, each once. Says so once per outage (warn), and again
 * when Redis is back (info). A Redis that does not answer when the service starts is
 * noticed the same way, by the first probe.
 */
export class RateLimitStoreSwitch {
  private readonly logger = new Logger('RateLimit');
  private readonly stopping = new AbortController();
  /** Memory until the first probe answers. */
  private current: RateLimitStore = 'memory';
  /** A warning went out and no recovery line yet. */
  private warned = false;
  private probing = false;

  constructor(
    private readonly redis: Redis,
    private readonly timeoutMs: number,
  ) {
    // ioredis reconnects by itself, emitting an error per failed attempt.
    redis.on('error', (error: Error) => this.failed(`is unreachable (${error.message})`));
  }

  get store(): RateLimitStore {
    return this.current;
  }

  start(): void {
    void this.probeUntilAnswered();
  }

  stop(): void {
    this.stopping.abort();
  }

  /**
   * `count`'s answer when Redis counts and answers in time; undefined when the request is
   * to be counted in memory.
   */
  async inRedis<T>(count: () => Promise<T>): Promise<{ value: T } | undefined> {
    if (this.current !== 'redis') return undefined;
    try {
      const answer = await withinTime(count(), this.timeoutMs);
      if (!answer) this.failed(`did not answer within ${this.timeoutMs} ms`);
      return answer;
    } catch (error) {
      this.failed(`is unreachable (${(error as Error).message})`);
      return undefined;
    }
  }

  private failed(reason: string): void {
    if (this.stopping.signal.aborted) return;
    this.current = 'memory';
    if (!this.warned) {
      this.logger.warn(`Redis ${reason}: counting the rate limit in memory until it answers`);
      this.warned = true;
    }
    void this.probeUntilAnswered();
  }

  /**
   * PINGs until one is answered within the time-out. A frozen Redis answers the pending
   * PING the moment it resumes; one more then shows whether it keeps up again.
   */
  private async probeUntilAnswered(): Promise<void> {
    if (this.probing) return;
    this.probing = true;
    try {
      while (!this.stopping.signal.aborted) {
        try {
          const answer = this.ping();
          if (await withinTime(answer, this.timeoutMs)) {
            this.answering();
            return;
          }
          this.failed(`did not answer within ${this.timeoutMs} ms`);
          await answer;
        } catch (error) {
          if (this.stopping.signal.aborted) return;
          this.failed(`is unreachable (${(error as Error).message})`);
          await sleep(PROBE_PAUSE_MS, undefined, { signal: this.stopping.signal }).catch(
            () => undefined,
          );
        }
      }
    } finally {
      this.probing = false;
    }
  }

  /** Rejects when the connection fails or the service stops. */
  private async ping(): Promise<void> {
    if (this.redis.status !== 'ready') {
      await once(this.redis, 'ready', { signal: this.stopping.signal });
    }
    await this.redis.ping();
  }

  private answering(): void {
    this.current = 'redis';
    if (this.warned) this.logger.log('Redis answers again: counting the rate limit in Redis');
    this.warned = false;
  }
}
