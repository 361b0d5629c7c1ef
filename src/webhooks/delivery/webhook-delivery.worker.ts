import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { ConcurrencyLimit } from '../../common/concurrency/concurrency-limit.js';
import { AppConfig } from '../../config/app-config.js';
import { ReceiverAddressPolicy, ReceiverRefusedError } from '../receiver-address.js';
import { parseReceiverUrl } from '../receiver-url.js';
import { signDelivery } from '../webhook-signature.js';
import {
  type ClaimedDelivery,
  type DeliveryOutcome,
  type SubscriptionStatus,
  WebhooksRepository,
} from '../webhooks.repository.js';
import { retryDelayMs } from './retry-schedule.js';
import { type AttemptResult, sendAttempt } from './webhook-sender.js';
import { WebhookMetrics } from './webhook-metrics.js';

/** Deliveries one process sends at once; a claim takes at most this many. */
const MAX_IN_FLIGHT = 64;
const CLAIM_BATCH = 32;
/**
 * Beyond an attempt's own limit (the address lookup and the request have WEBHOOK_TIMEOUT_MS
 * each), how long a claimed delivery stays out of other processes' reach.
 */
const LEASE_MARGIN_MS = 30_000;
/** Statements the worker runs at once: it leaves the rest of the pool to the API. */
const DATABASE_CONCURRENCY = 1;
/** `last_error` is varchar(255). */
const ERROR_LENGTH = 255;

interface Attempted {
  delivery: ClaimedDelivery;
  result: AttemptResult;
  accepted: boolean;
}

/**
 * Drains the outbox in every process: polls, takes due deliveries with FOR UPDATE SKIP
 * LOCKED and a lease (so replicas never send one at the same time), turns as many new
 * events as there is room for into one delivery per subscription, sends them outside any
 * transaction, then records the outcomes. At least once: a process that dies mid-attempt
 * leaves the delivery to be sent again when its lease runs out. A failed attempt is tried
 * again after an exponential back-off with jitter, until WEBHOOK_MAX_ATTEMPTS, then the
 * delivery is failed. Nothing here is on a request's path: a slow receiver costs the
 * worker, never POST /plants.
 */
@Injectable()
export class WebhookDeliveryWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Webhooks');
  private readonly database = new ConcurrencyLimit(DATABASE_CONCURRENCY);
  /** Claims and their deliveries under way. */
  private readonly batches = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private inFlight = 0;
  private claiming = false;
  private stopped = false;
  /** Says so once per outage, not once per poll. */
  private databaseFailing = false;

  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly receivers: ReceiverAddressPolicy,
    private readonly metrics: WebhookMetrics,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.poll(), this.config.webhookPollIntervalMs);
  }

  /** Before the pool closes: claims no more, and lets the attempts under way finish. */
  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await Promise.all(this.batches);
  }

  private poll(): void {
    const room = MAX_IN_FLIGHT - this.inFlight;
    if (this.stopped || this.claiming || room <= 0) return;
    this.claiming = true;
    // Tracked from the claim on: a shutdown waits for what this process has taken.
    this.track(this.claimAndDeliver(Math.min(room, CLAIM_BATCH)));
  }

  private async claimAndDeliver(limit: number): Promise<void> {
    const leaseMs = 2 * this.config.webhookTimeoutMs + LEASE_MARGIN_MS;
    let claimed: ClaimedDelivery[];
    try {
      claimed = await this.database.run(() => this.webhooks.claimDue(limit, leaseMs));
      // Events become deliveries only as fast as they are sent: a backlog behind slow
      // receivers stays one event row per plant, not a row per subscription, rewritten.
      const room = limit - claimed.length;
      if (room > 0 && (await this.database.run(() => this.webhooks.fanOut(room))) > 0) {
        const more = await this.database.run(() => this.webhooks.claimDue(room, leaseMs));
        claimed = [...claimed, ...more];
      }
      this.databaseIsBack();
    } catch (error) {
      this.databaseFails(error as Error);
      return;
    } finally {
      this.claiming = false;
    }
    if (claimed.length === 0) return;
    this.inFlight += claimed.length;
    // A full claim: more may be due at once.
    if (claimed.length === limit) this.poll();
    await this.deliver(claimed);
  }

  private track(work: Promise<void>): void {
    this.batches.add(work);
    void work.finally(() => this.batches.delete(work));
  }

  /** Sends claimed deliveries (counted in `inFlight` by the caller) and records how it went. */
  private async deliver(claimed: ClaimedDelivery[]): Promise<void> {
    try {
      const attempted = await Promise.all(claimed.map((delivery) => this.attempt(delivery)));
      const outcomes = attempted.map((each) => this.outcomeOf(each));
      await this.database.run(() =>
        this.webhooks.recordOutcomes(outcomes, subscriptionStatuses(attempted)),
      );
      for (const { status } of outcomes) {
        if (status === 'delivered') this.metrics.sent.inc();
        else if (status === 'failed') this.metrics.failed.inc();
        else this.metrics.retried.inc();
      }
    } catch (error) {
      // Sent or not, the deliveries are due again when their lease runs out.
      this.databaseFails(error as Error);
    } finally {
      this.inFlight -= claimed.length;
    }
    if (this.inFlight === 0) this.poll();
  }

  private async attempt(delivery: ClaimedDelivery): Promise<Attempted> {
    const { webhookTimeoutMs } = this.config;
    let result: AttemptResult;
    try {
      // The rules registration applies, again: DNS may have changed since, and a URL stored
      // before a rule was added must not escape it.
      const url = parseReceiverUrl(delivery.url);
      const address = await this.receivers.resolve(url);
      result = await sendAttempt({
        url,
        address,
        body: delivery.payload,
        timeoutMs: webhookTimeoutMs,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'plant-store-webhooks',
          ...signDelivery(delivery.secret, delivery.messageId, new Date(), delivery.payload),
        },
      });
    } catch (error) {
      if (!(error instanceof ReceiverRefusedError)) throw error;
      result = { error: error.message };
    }
    const accepted = 'status' in result && result.status >= 200 && result.status < 300;
    return { delivery, result, accepted };
  }

  private outcomeOf({ delivery, accepted }: Attempted): DeliveryOutcome {
    if (accepted) return { delivery, status: 'delivered', retryInMs: 0 };
    if (delivery.attempts >= this.config.webhookMaxAttempts) {
      return { delivery, status: 'failed', retryInMs: 0 };
    }
    const retryInMs = retryDelayMs(delivery.attempts, this.config.webhookRetryBaseMs);
    return { delivery, status: 'pending', retryInMs };
  }

  private databaseFails(error: Error): void {
    if (!this.databaseFailing) {
      this.logger.warn(`webhook deliveries wait for the database: ${error.message}`);
    }
    this.databaseFailing = true;
  }

  private databaseIsBack(): void {
    if (this.databaseFailing) this.logger.log('webhook deliveries go on');
    this.databaseFailing = false;
  }
}

/** Each subscription's status after these attempts (taken in the order they were claimed). */
function subscriptionStatuses(attempted: Attempted[]): SubscriptionStatus[] {
  const byId = new Map<string, SubscriptionStatus>();
  for (const { delivery, result, accepted } of attempted) {
    const status = byId.get(delivery.subscriptionId) ?? {
      id: delivery.subscriptionId,
      lastStatus: null,
      lastError: null,
      succeeded: false,
      failuresAfter: 0,
    };
    status.lastStatus = 'status' in result ? result.status : null;
    status.lastError = 'error' in result ? result.error.slice(0, ERROR_LENGTH) : null;
    if (accepted) {
      status.succeeded = true;
      status.failuresAfter = 0;
    } else {
      status.failuresAfter++;
    }
    byId.set(delivery.subscriptionId, status);
  }
  return [...byId.values()];
}
