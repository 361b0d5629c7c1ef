import { randomUUID } from 'node:crypto';
import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { ConcurrencyLimit } from '../../common/concurrency/concurrency-limit.js';
import { type ActiveSpan, type SpanAttributes, tracing } from '../../common/tracing/tracing.js';
import { AppConfig } from '../../config/app-config.js';
import { DatabaseNotifications } from '../../database/database-notifications.js';
import { ReceiverAddressPolicy, ReceiverRefusedError } from '../receiver-address.js';
import { parseReceiverUrl } from '../receiver-url.js';
import { signDelivery } from '../webhook-signature.js';
import {
  type ClaimedDelivery,
  type DeliveryOutcome,
  type SubscriptionStatus,
  WEBHOOK_EVENTS_CHANNEL,
  WebhooksRepository,
} from '../webhooks.repository.js';
import { retryDelayMs } from './retry-schedule.js';
import { type AttemptResult, sendAttempt } from './webhook-sender.js';
import { WebhookMetrics } from './webhook-metrics.js';

/**
 * Deliveries one process sends at once (sockets waiting, mostly); a subscription takes at
 * most WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION of them.
 */
const MAX_IN_FLIGHT = 128;
/** Deliveries one claim takes at most, shared round the subscriptions. */
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
/** The span of each attempt: one name for every receiver, which its attributes tell apart. */
const ATTEMPT_SPAN = 'webhook delivery';

interface Attempted {
  delivery: ClaimedDelivery;
  result: AttemptResult;
  accepted: boolean;
  /** When the receiver's answer, or the lack of one, ended the attempt (performance.now()). */
  answeredAt: number;
}

/**
 * Drains the outbox in every process: wakes when a create commits events (LISTEN, on the
 * process's notification connection) and polls besides, takes due deliveries with FOR UPDATE SKIP
 * LOCKED and a lease (so replicas never send one at the same time), turns as many new
 * events as there is room for into one delivery per subscription, sends them outside any
 * transaction, then records the outcomes. At least once: a process that dies mid-attempt
 * leaves the delivery to be sent again when its lease runs out. A process whose statement
 * failed (its connection went, in a failover say) may hold leases it does not know of: a
 * claim that committed, its answer lost; or outcomes it could not record. Once the
 * database answers again it ends the leases it holds on deliveries it is not sending
 * (leases carry the process's id), so that they are sent at once, not when the lease runs
 * out; those it is sending keep theirs, so no other process sends them meanwhile. A failed attempt is tried
 * again after an exponential back-off with jitter, until WEBHOOK_MAX_ATTEMPTS, then the
 * delivery is failed. Nothing here is on a request's path: a slow receiver costs the
 * worker, never POST /plants. Fair: a subscription has at most
 * WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION attempts in flight here, and each subscription's
 * share of a claim frees its slots as soon as its outcomes are recorded, so a receiver
 * that never answers delays only its own deliveries. The poll is the fallback: retries
 * come due by time alone, and notifications are missed while the connection is lost.
 */
@Injectable()
export class WebhookDeliveryWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Webhooks');
  private readonly database = new ConcurrencyLimit(DATABASE_CONCURRENCY);
  /** Claims, attempts and the recording of outcomes under way: a shutdown waits for them. */
  private readonly work = new Set<Promise<void>>();
  /** Attempts in flight (until their outcome is recorded), by subscription id. */
  private readonly inFlight = new Map<string, number>();
  private inFlightTotal = 0;
  /** The deliveries claimed and not released yet, by id: the leases this process uses. */
  private readonly sending = new Set<string>();
  /** Written with each claim: the leases this process's claims took. */
  private readonly leaseOwner = randomUUID();
  /** A statement failed: a claim may have committed unseen, an outcome gone unrecorded. */
  private leasesInDoubt = false;
  /** Attempts made whose outcome is not recorded yet. */
  private attempted: Attempted[] = [];
  private timer: NodeJS.Timeout | undefined;
  private claiming = false;
  /** Asked to claim while a claim was under way: its snapshot may predate new events. */
  private claimAgain = false;
  private waking = false;
  /** Woken for new events since the last claim began: it fans them out first. */
  private eventsCommitted = false;
  private recording = false;
  private stopped = false;
  /** Says so once per outage, not once per poll. */
  private databaseFailing = false;

  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly receivers: ReceiverAddressPolicy,
    private readonly metrics: WebhookMetrics,
    private readonly config: AppConfig,
    private readonly notifications: DatabaseNotifications,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.poll(), this.config.webhookPollIntervalMs);
    if (!this.config.webhookListen) return;
    // Listening again after a loss, it claims at once what was announced meanwhile.
    const wake = () => this.wake();
    this.notifications
      .listen(WEBHOOK_EVENTS_CHANNEL, { notified: wake, listening: wake })
      .catch((error: Error) =>
        this.logger.warn(
          `webhook deliveries wait for the poll until LISTEN works: ${error.message}`,
        ),
      );
  }

  /** Before the pool closes: claims no more, and lets the attempts under way finish. */
  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    while (this.work.size > 0) await Promise.all(this.work);
  }

  /**
   * Events were committed: claims once in the next event-loop turn, however many
   * notifications arrived in this one (a burst of creates costs a claim, not one each).
   */
  private wake(): void {
    if (this.waking) return;
    this.waking = true;
    setImmediate(() => {
      this.waking = false;
      this.eventsCommitted = true;
      this.poll();
    });
  }

  private poll(): void {
    const room = MAX_IN_FLIGHT - this.inFlightTotal;
    if (this.stopped || room <= 0) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    this.claiming = true;
    this.claimAgain = false;
    const woken = this.eventsCommitted;
    this.eventsCommitted = false;
    // Tracked from the claim on: a shutdown waits for what this process has taken.
    this.track(this.claimAndSend(Math.min(room, CLAIM_BATCH), woken));
  }

  /**
   * @param woken for new events: they are fanned out first, and the one claim after takes
   * their deliveries with whatever else is due, a statement fewer on the way to a receiver
   */
  private async claimAndSend(limit: number, woken: boolean): Promise<void> {
    const leaseMs = 2 * this.config.webhookTimeoutMs + LEASE_MARGIN_MS;
    const perSubscription = this.config.webhookMaxInFlightPerSubscription;
    // A claim goes ahead of outcomes waiting to be recorded: deliveries wait for it.
    const claimDue = (count: number) =>
      this.database.run(
        () =>
          this.webhooks.claimDue(count, leaseMs, perSubscription, this.inFlight, this.leaseOwner),
        true,
      );
    let claimed = 0;
    try {
      // Before the claim, which then takes them with whatever else is due.
      if (this.leasesInDoubt && (await this.releaseLeasesInDoubt()) > 0) woken = false;
      if (!woken) claimed += this.send(await claimDue(limit));
      // Events become deliveries only as fast as they are sent: a backlog behind slow
      // receivers stays one event row per plant, not a row per subscription, rewritten.
      const room = limit - claimed;
      if (room > 0) {
        const busy = [...this.inFlight].flatMap(([id, count]) =>
          count >= perSubscription ? [id] : [],
        );
        if ((await this.database.run(() => this.webhooks.fanOut(room, busy), true)) > 0) {
          claimed += this.send(await claimDue(room));
        }
      }
      this.databaseIsBack();
    } catch (error) {
      this.databaseFails(error as Error);
      return;
    } finally {
      this.claiming = false;
    }
    // A full claim: more may be due at once; or events committed while it ran.
    if (claimed === limit || this.claimAgain) this.poll();
  }

  /** Ends this process's leases on deliveries it is not sending; answers how many. */
  private async releaseLeasesInDoubt(): Promise<number> {
    const released = await this.database.run(
      () => this.webhooks.releaseLeases(this.leaseOwner, this.sending),
      true,
    );
    this.leasesInDoubt = false;
    if (released > 0) {
      this.logger.log(
        `${released} webhook deliveries claimed by this process and not being sent are due again`,
      );
    }
    return released;
  }

  private track(work: Promise<void>): void {
    this.work.add(work);
    void work.finally(() => this.work.delete(work));
  }

  /** Starts an attempt for each claimed delivery; answers how many. */
  private send(claimed: ClaimedDelivery[]): number {
    const bySubscription = Map.groupBy(claimed, ({ subscriptionId }) => subscriptionId);
    for (const [subscriptionId, deliveries] of bySubscription) {
      this.inFlight.set(
        subscriptionId,
        (this.inFlight.get(subscriptionId) ?? 0) + deliveries.length,
      );
      this.inFlightTotal += deliveries.length;
      for (const { id } of deliveries) this.sending.add(id);
      this.track(this.attemptAndRecord(deliveries));
    }
    return claimed.length;
  }

  /**
   * One subscription's deliveries of a claim, recorded together once all are attempted:
   * one statement for the batch, while a receiver that does not answer holds back only
   * its own.
   */
  private async attemptAndRecord(deliveries: ClaimedDelivery[]): Promise<void> {
    const settled = await Promise.allSettled(deliveries.map((each) => this.attempt(each)));
    settled.forEach((outcome, index) => {
      if (outcome.status === 'fulfilled') {
        this.attempted.push(outcome.value);
      } else {
        // Not sent: it is due again when its lease runs out.
        this.logger.warn(
          `webhook attempt not made for subscription ${deliveries[index].subscriptionId}: ${(outcome.reason as Error).message}`,
        );
        this.release([deliveries[index]]);
      }
    });
    if (!this.recording) {
      this.recording = true;
      this.track(this.recordAttempted());
    }
  }

  /**
   * Records the outcomes of the attempts made so far in one statement, and again while
   * more finish meanwhile; each frees its slot once recorded, and the freed room is
   * claimed again at once.
   */
  private async recordAttempted(): Promise<void> {
    try {
      while (this.attempted.length > 0) {
        const attempted = this.attempted;
        this.attempted = [];
        try {
          const outcomes = attempted.map((each) => this.outcomeOf(each));
          const statuses = subscriptionStatuses(attempted);
          await this.database.run(() => this.webhooks.recordOutcomes(outcomes, statuses));
          for (const [index, { status }] of outcomes.entries()) {
            if (status === 'delivered') this.delivered(attempted[index]);
            else if (status === 'failed') this.metrics.failed.inc();
            else this.metrics.retried.inc();
          }
          await this.disableFailing(statuses);
        } catch (error) {
          // Sent or not, the deliveries are due again once the database answers (their
          // leases are released then), or at the latest when their lease runs out.
          this.databaseFails(error as Error);
        } finally {
          this.release(attempted.map(({ delivery }) => delivery));
        }
        this.poll();
      }
    } finally {
      this.recording = false;
    }
  }

  /** Counted once recorded: a delivery whose outcome was lost is sent, and counted, again. */
  private delivered({ delivery, answeredAt }: Attempted): void {
    this.metrics.sent.inc();
    this.metrics.latency.observe(
      delivery.createdSecondsAgo + (answeredAt - delivery.claimedAt) / 1000,
    );
  }

  /**
   * Disables the subscriptions whose attempts have all failed for
   * WEBHOOK_DISABLE_AFTER_FAILING_MS; asked only of those whose last attempt failed.
   */
  private async disableFailing(statuses: SubscriptionStatus[]): Promise<void> {
    const { webhookDisableAfterFailingMs } = this.config;
    const failing = statuses.flatMap(({ id, failuresAfter }) => (failuresAfter > 0 ? [id] : []));
    if (webhookDisableAfterFailingMs === 0 || failing.length === 0) return;
    const disabled = await this.database.run(() =>
      this.webhooks.disableFailing(failing, webhookDisableAfterFailingMs),
    );
    for (const { id, failingSince, givenUp } of disabled) {
      this.metrics.failed.inc(givenUp);
      this.logger.warn(
        `webhook ${id} disabled: every attempt failed since ${failingSince.toISOString()}; ${givenUp} pending deliveries failed (POST /webhooks/${id}/enable, then /redeliver)`,
      );
    }
  }

  private release(deliveries: ClaimedDelivery[]): void {
    for (const { id, subscriptionId } of deliveries) {
      this.sending.delete(id);
      const left = (this.inFlight.get(subscriptionId) ?? 1) - 1;
      if (left > 0) this.inFlight.set(subscriptionId, left);
      else this.inFlight.delete(subscriptionId);
      this.inFlightTotal--;
    }
  }

  /**
   * One attempt, as a client span in the trace of the create the delivery comes from (its
   * stored `traceparent`), whichever process makes it and however much later.
   */
  private attempt(delivery: ClaimedDelivery): Promise<Attempted> {
    const attributes = {
      'http.request.method': 'POST',
      'plant_store.webhook.subscription_id': delivery.subscriptionId,
      'plant_store.webhook.attempt': delivery.attempts,
      'plant_store.webhook.message_id': delivery.messageId,
    };
    return tracing().inSpan(
      ATTEMPT_SPAN,
      { kind: 'client', parent: delivery.traceContext, attributes },
      (span) => this.attemptIn(span, delivery),
    );
  }

  private async attemptIn(span: ActiveSpan, delivery: ClaimedDelivery): Promise<Attempted> {
    const { webhookTimeoutMs, webhookSendTraceContext } = this.config;
    let result: AttemptResult;
    try {
      // The rules registration applies, again: DNS may have changed since, and a URL stored
      // before a rule was added must not escape it.
      const url = parseReceiverUrl(delivery.url);
      span.setAttributes(receiverAttributes(url));
      const address = await this.receivers.resolve(url);
      result = await sendAttempt({
        url,
        address,
        body: delivery.payload,
        timeoutMs: webhookTimeoutMs,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'plant-store-webhooks',
          ...signDelivery(delivery.secrets(), delivery.messageId, new Date(), delivery.payload),
          ...(webhookSendTraceContext ? span.propagationHeaders() : {}),
        },
      });
    } catch (error) {
      if (!(error instanceof ReceiverRefusedError)) throw error;
      result = { error: error.message };
    }
    if ('status' in result) span.setAttributes({ 'http.response.status_code': result.status });
    const accepted = 'status' in result && result.status >= 200 && result.status < 300;
    if (!accepted) {
      span.fail('error' in result ? result.error : `the receiver answered ${result.status}`);
    }
    return { delivery, result, accepted, answeredAt: performance.now() };
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
    this.leasesInDoubt = true;
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

/**
 * Where an attempt goes, as OpenTelemetry's HTTP client conventions name it: the URL
 * without its query, which may hold a receiver's secret.
 */
function receiverAttributes(url: URL): SpanAttributes {
  return {
    'url.full': `${url.origin}${url.pathname}`,
    'server.address': url.hostname.replace(/^\[(.*)\]$/, '$1'),
    'server.port': Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
  };
}

/** Each subscription's status after these attempts (in the order they finished). */
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
