import { randomUUID } from 'node:crypto';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type pg from 'pg';
import type { EntityManager, Repository } from 'typeorm';
import {
  atMilliseconds,
  DATE_TIME_KEY,
  type Key,
  Keyset,
  UUID_KEY,
} from '../common/pagination/keyset.js';
import { isSchemaNotMigratedYet } from '../database/database-errors.js';
import { postgresPool } from '../database/postgres-pool.js';
import { CreatedPlantsOutbox } from '../plants/created-plants-outbox.js';
import type { DeliveryStatus } from './entities/webhook-delivery.entity.js';
import { WebhookSubscription } from './entities/webhook-subscription.entity.js';
import { CLEAR_SECRETS_RETIRED } from './secrets/seal-stored-secrets.js';
import {
  SecretKeyError,
  type SecretPlace,
  WebhookSecretKeyring,
} from './secrets/webhook-secret-keyring.js';

/**
 * Announced when deliveries are due at once (new events, a redeliver), so that every
 * process's worker wakes instead of waiting for its next poll. PostgreSQL delivers a
 * notification at commit, and folds a transaction's identical ones into one.
 */
/**
 * GET /webhooks, oldest first: by `created_at` at the millisecond (the column is written by
 * `DEFAULT now()`, in microseconds, which a cursor's Date does not hold), then by id.
 */
export const WEBHOOKS_OLDEST_FIRST = new Keyset<WebhookSubscription>(
  { property: 'createdAt', codec: DATE_TIME_KEY, sql: atMilliseconds },
  { property: 'id', codec: UUID_KEY },
);

export const WEBHOOK_EVENTS_CHANNEL = 'plant_store_webhook_events';
const WAKE_THE_WORKERS = `pg_notify('${WEBHOOK_EVENTS_CHANNEL}', '')`;

/**
 * The outbox writer added to the plants' insert statement (see CreatedPlantsOutbox): one
 * event per new plant while any enabled subscription exists, one row however many there are, so
 * that subscriptions cost the hot path nothing more. The body is the plant's NewPlant
 * JSON, written by PostgreSQL from the stored bigint, so the id keeps every digit; `tag`
 * only when the plant has one, as the API writes it; and the create's trace context, which
 * its deliveries continue. RETURNING wakes the workers once per statement that wrote an
 * event, and never otherwise: without a subscription, a create notifies nothing.
 */
const NEW_PLANT_EVENTS = `
      INSERT INTO webhook_events (payload, trace_context)
      SELECT format('{"id":%s,"name":%s%s}', plant.id, to_json(plant.name),
                    CASE WHEN plant.tag IS NULL THEN '' ELSE ',"tag":' || to_json(plant.tag) END),
             plant.trace_context
      FROM created_plants AS plant
      WHERE EXISTS (SELECT FROM webhook_subscriptions WHERE disabled_at IS NULL)
      RETURNING ${WAKE_THE_WORKERS}`;

/**
 * Turns up to $1 events into one delivery per enabled subscription that existed when the
 * plant was created, and removes them, in one statement: an event becomes its
 * deliveries, or stays an event, never both or neither. SKIP LOCKED lets replicas fan out
 * at once, each its own events. Nothing is fanned out while every enabled subscription
 * has its attempts in flight in this process ($2: those that do): a backlog behind
 * receivers that do not answer stays one event row per plant. A disabled subscription
 * gets nothing of what is created meanwhile.
 *
 * A subscription deleted while this runs gets nothing and fails nothing: `live` takes
 * FOR KEY SHARE on the subscriptions it fans out to (the lock the foreign key's own check
 * takes, which a DELETE's conflicts with). One whose DELETE has not committed is waited
 * for; under READ COMMITTED a row deleted by then is left out (the lock finds it gone),
 * where the statement's snapshot alone still saw it and the insert broke
 * webhook_deliveries_subscription_id_fkey, failing the batch. One deleted after the lock
 * waits for this commit, and its cascade, with a snapshot of its own, removes what this
 * inserted.
 */
const FAN_OUT = `
  WITH taken AS (
    DELETE FROM webhook_events
    WHERE id IN (SELECT id FROM webhook_events ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
      AND NOT (
        EXISTS (SELECT FROM webhook_subscriptions WHERE disabled_at IS NULL)
        AND NOT EXISTS (
          SELECT FROM webhook_subscriptions
          WHERE disabled_at IS NULL AND id <> ALL($2::uuid[])
        )
      )
    RETURNING payload, created_at, trace_context
  ), live AS (
    SELECT id, created_at FROM webhook_subscriptions WHERE disabled_at IS NULL
    FOR KEY SHARE
  ), fanned AS (
    INSERT INTO webhook_deliveries (subscription_id, payload, created_at, trace_context)
    SELECT subscription.id, taken.payload, taken.created_at, taken.trace_context
    FROM taken JOIN live AS subscription ON subscription.created_at <= taken.created_at
  )
  SELECT count(*)::integer AS events FROM taken`;

/**
 * Takes up to $1 due deliveries that no other process holds (SKIP LOCKED), counts the
 * attempt, and moves their next attempt $2 ms away: a lease, so that no other replica
 * sends them while this one does; should this process die, they are due again then.
 * Each subscription has at most $3 attempts in flight in this process ($4, $5: those it
 * has now), so a receiver that does not answer holds only its own; and the claim goes
 * round the subscriptions (each one's oldest due delivery, then each one's second…), so a
 * subscription with a backlog cannot crowd the others out of it. Disabled ones are skipped.
 * The previous secret comes too while a rotation's overlap lasts. The lease is the claiming
 * process's ($6), for RELEASE_LEASES.
 */
const CLAIM_DUE = `
  WITH in_flight AS (
    SELECT * FROM unnest($4::uuid[], $5::integer[]) AS in_flight (subscription_id, attempts)
  ), candidate AS (
    SELECT due.id, due.next_attempt_at,
           row_number() OVER (PARTITION BY subscription.id ORDER BY due.next_attempt_at) AS turn
    FROM webhook_subscriptions AS subscription
    LEFT JOIN in_flight ON in_flight.subscription_id = subscription.id
    CROSS JOIN LATERAL (
      SELECT id, next_attempt_at FROM webhook_deliveries
      WHERE subscription_id = subscription.id AND status = 'pending' AND next_attempt_at <= now()
      ORDER BY next_attempt_at
      LIMIT greatest($3::integer - coalesce(in_flight.attempts, 0), 0)
      FOR UPDATE SKIP LOCKED
    ) AS due
    WHERE subscription.disabled_at IS NULL
  ), claimed AS (
    SELECT id FROM candidate ORDER BY turn, next_attempt_at LIMIT $1
  )
  UPDATE webhook_deliveries AS delivery
  SET attempts = delivery.attempts + 1,
      next_attempt_at = now() + $2::integer * interval '1 millisecond',
      lease_owner = $6::uuid
  FROM claimed, webhook_subscriptions AS subscription
  WHERE delivery.id = claimed.id AND subscription.id = delivery.subscription_id
  RETURNING delivery.id::text, delivery.message_id, delivery.payload, delivery.attempts,
            extract(epoch FROM clock_timestamp() - delivery.created_at)::float8 AS created_seconds_ago,
            delivery.trace_context, subscription.id AS subscription_id, subscription.url,
            subscription.secret, subscription.secret_encrypted,
            CASE WHEN subscription.previous_secret_expires_at > now()
              THEN subscription.previous_secret END AS previous_secret,
            subscription.previous_secret_expires_at`;

/**
 * Ends the leases process $1 holds on pending deliveries other than $2, the ones it is
 * sending: they are due at once. Its claim committed but its answer was lost (the
 * connection went, in a failover say), or the outcome of an attempt was not recorded; no
 * other process sends them while the lease runs, and this one is not sending them either.
 */
const RELEASE_LEASES = `
  UPDATE webhook_deliveries SET next_attempt_at = now(), lease_owner = NULL
  WHERE lease_owner = $1::uuid AND status = 'pending' AND next_attempt_at > now()
    AND id <> ALL($2::bigint[])`;

/**
 * Records attempts' outcomes, each only if the delivery is still pending at the attempt
 * this process made (a lease that ran out may have let another process take it, and
 * disabling its subscription fails it), and the subscriptions' delivery status, in one
 * statement. `failing_since` is the first failure since the last success.
 */
const RECORD_OUTCOMES = `
  WITH outcome AS (
    SELECT * FROM unnest($1::bigint[], $2::integer[], $3::varchar[], $4::float8[])
      AS outcome (id, attempts, status, retry_in_ms)
  ), recorded AS (
    UPDATE webhook_deliveries AS delivery
    SET status = outcome.status,
        next_attempt_at = CASE WHEN outcome.status = 'pending'
          THEN now() + outcome.retry_in_ms * interval '1 millisecond'
          ELSE delivery.next_attempt_at END,
        delivered_at = CASE WHEN outcome.status = 'delivered' THEN now() END,
        lease_owner = NULL
    FROM outcome
    WHERE delivery.id = outcome.id AND delivery.attempts = outcome.attempts
      AND delivery.status = 'pending'
  )
  UPDATE webhook_subscriptions AS subscription
  SET last_attempt_at = now(),
      last_status = status.last_status,
      last_error = status.last_error,
      failures_in_a_row =
        CASE WHEN status.succeeded THEN 0 ELSE subscription.failures_in_a_row END
        + status.failures_after,
      failing_since = CASE
        WHEN status.failures_after = 0 THEN NULL
        WHEN status.succeeded THEN now()
        ELSE coalesce(subscription.failing_since, now()) END
  FROM unnest($5::uuid[], $6::integer[], $7::varchar[], $8::boolean[], $9::integer[])
    AS status (id, last_status, last_error, succeeded, failures_after)
  WHERE subscription.id = status.id`;

/**
 * Disables those of subscriptions $1 whose every attempt has failed for $2 ms or more, and
 * fails their pending deliveries (redeliver sends them again once enabled); answers each
 * one disabled with how many deliveries it gave up.
 */
const DISABLE_FAILING = `
  WITH disabled AS (
    UPDATE webhook_subscriptions SET disabled_at = now()
    WHERE id = ANY($1::uuid[]) AND disabled_at IS NULL
      AND failing_since <= now() - $2::float8 * interval '1 millisecond'
    RETURNING id, failing_since
  ), given_up AS (
    UPDATE webhook_deliveries AS delivery SET status = 'failed'
    FROM disabled
    WHERE delivery.subscription_id = disabled.id AND delivery.status = 'pending'
    RETURNING delivery.subscription_id
  )
  SELECT disabled.id, disabled.failing_since,
         (SELECT count(*) FROM given_up WHERE subscription_id = disabled.id)::integer AS given_up
  FROM disabled`;

/**
 * Enables subscription $1 again, its failures counted from now on; answers when it had
 * been disabled (null: it was enabled), or nothing when there is no such subscription.
 */
const ENABLE = `
  WITH enabled AS (
    UPDATE webhook_subscriptions AS subscription
    SET disabled_at = NULL, failing_since = NULL
    FROM webhook_subscriptions AS before
    WHERE subscription.id = $1 AND before.id = subscription.id
    RETURNING before.disabled_at
  )
  SELECT disabled_at FROM enabled`;

/** Deletes subscription $1 and its deliveries; answers its URL, or nothing when there is none. */
const DELETE = `
  WITH deleted AS (DELETE FROM webhook_subscriptions WHERE id = $1 RETURNING url)
  SELECT url FROM deleted`;

/**
 * A subscription's secret, locked until its rotation commits, and when an overlap of $2
 * seconds starting now would end (to the millisecond, as the secret is bound to it).
 */
const LOCK_SECRET = `
  SELECT secret, secret_encrypted,
         date_trunc('milliseconds', now() + $2::integer * interval '1 second') AS overlap_ends_at
  FROM webhook_subscriptions WHERE id = $1 FOR UPDATE`;

/**
 * Gives subscription $1 the encrypted secret $2; its current one, $4 (encrypted for the
 * previous secret's place), signs too until $3 (null: not at all). A rotation during an
 * overlap ends the earlier one: only the secret current until now stays valid beside the
 * new one. A clear copy, which a subscription the release before created has, is erased.
 */
const ROTATE_SECRET = `
  UPDATE webhook_subscriptions
  SET previous_secret = $4, previous_secret_expires_at = $3,
      secret_encrypted = $2, secret = NULL
  WHERE id = $1`;

const ERASE_ENDED_PREVIOUS_SECRETS = `
  UPDATE webhook_subscriptions SET previous_secret = NULL, previous_secret_expires_at = NULL
  WHERE previous_secret_expires_at <= now()`;

/**
 * One stored ciphertext per key id, current and previous secrets alike, with its place;
 * how many subscriptions still hold a clear secret (written by the release before
 * encryption); and whether `webhook-secrets re-encrypt` retired clear secrets for good
 * (its constraint, which refuses them).
 */
const SECRETS_AT_REST = `
  SELECT
    (SELECT coalesce(json_agg(stored), '[]') FROM (
      SELECT DISTINCT ON (split_part(sealed, ':', 2)) sealed, id, column_name, expires_at
      FROM (
        SELECT secret_encrypted AS sealed, id, 'secret_encrypted' AS column_name,
               NULL::timestamptz AS expires_at
        FROM webhook_subscriptions WHERE secret_encrypted IS NOT NULL
        UNION ALL
        SELECT previous_secret, id, 'previous_secret', previous_secret_expires_at
        FROM webhook_subscriptions WHERE previous_secret IS NOT NULL
      ) AS sealed_secrets
    ) AS stored) AS sealed,
    (SELECT count(*) FROM webhook_subscriptions WHERE secret IS NOT NULL)::integer AS clear,
    EXISTS (
      SELECT FROM pg_constraint WHERE conname = '${CLEAR_SECRETS_RETIRED}'
        AND conrelid = 'webhook_subscriptions'::regclass
    ) AS retired`;

/** Subscriptions disabled for failing. */
const DISABLED_COUNT = `
  SELECT count(*)::integer AS disabled FROM webhook_subscriptions WHERE disabled_at IS NOT NULL`;

/**
 * How long the enabled subscription failing longest has failed every attempt, in seconds;
 * 0 when none is failing.
 */
const LONGEST_FAILING = `
  SELECT coalesce(extract(epoch FROM now() - min(failing_since)), 0)::float8 AS seconds
  FROM webhook_subscriptions WHERE disabled_at IS NULL`;

/** The age of the oldest event not yet delivered, in seconds; 0 when there is none. */
const QUEUE_AGE = `
  SELECT coalesce(extract(epoch FROM now() - least(
    (SELECT min(created_at) FROM webhook_events),
    (SELECT min(created_at) FROM webhook_deliveries WHERE status = 'pending')
  )), 0)::float8 AS seconds`;

/**
 * Sends subscription $1's failed deliveries again, from a first attempt, at once; answers
 * how many, or nothing when there is no such subscription.
 */
const REDELIVER_FAILED = `
  WITH redelivered AS (
    UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = now()
    WHERE subscription_id = $1 AND status = 'failed'
    RETURNING ${WAKE_THE_WORKERS}
  )
  SELECT (SELECT count(*) FROM redelivered)::integer AS redelivered
  FROM webhook_subscriptions WHERE id = $1`;

/**
 * The advisory lock a batch of the retention sweep holds ("PlantR"), for its transaction
 * only: a process that cannot take it at once leaves the sweep to the process that has it.
 * Any role may take an advisory lock: a service role granted only DML can sweep.
 */
export const RETENTION_SWEEP_LOCK_KEY = 0x506c616e7452;

/**
 * The limits a batch of the sweep runs under, for its transaction only ($1, $2), then the
 * sweep's lock, tried ($3): true when this process holds it.
 */
const LOCK_FOR_SWEEP = `
  SELECT set_config('statement_timeout', $1, true), set_config('lock_timeout', $2, true),
         pg_try_advisory_xact_lock($3) AS locked`;

/**
 * Removes up to $2 delivered and failed deliveries whose plant was created more than $1 ms
 * ago, oldest first from creation time $3 on, by the index of settled deliveries
 * (webhook_deliveries_settled_idx), which holds no pending one. A row another transaction
 * holds is skipped, never waited for (the next sweep takes it); a row locked here is
 * checked again as it now is, so one a redeliver has just made pending again is kept.
 * Answers how many, and the newest creation time among them, from which the next batch
 * goes on without walking the index entries this one left dead.
 */
const REMOVE_EXPIRED_DELIVERIES = `
  WITH expired AS (
    SELECT id FROM webhook_deliveries
    WHERE status <> 'pending'
      AND created_at >= $3::timestamptz
      AND created_at < now() - $1::float8 * interval '1 millisecond'
    ORDER BY created_at
    LIMIT $2
    FOR UPDATE SKIP LOCKED
  ), removed AS (
    DELETE FROM webhook_deliveries AS delivery USING expired
    WHERE delivery.id = expired.id
    RETURNING delivery.created_at
  )
  SELECT count(*)::integer AS removed, max(created_at) AS newest FROM removed`;

/** What one batch of the retention sweep removed. */
export interface RemovedBatch {
  removed: number;
  /** The newest creation time among the rows removed; null when none was. */
  newest: Date | null;
}

/** The limits one batch of the retention sweep runs under. */
export interface SweepLimits {
  statementTimeoutMs: number;
  lockTimeoutMs: number;
}

/** A delivery taken by this process, with what sending it needs. */
export interface ClaimedDelivery {
  id: string;
  messageId: string;
  payload: string;
  /** This attempt's number, the first being 1. */
  attempts: number;
  /**
   * How long before the claim its plant was created, by the database's clock, and when the
   * claim was answered (performance.now()): the delivery's latency, without comparing the
   * database's clock with this process's.
   */
  createdSecondsAgo: number;
  claimedAt: number;
  /** The W3C `traceparent` of the create it comes from; null when that was not traced. */
  traceContext: string | null;
  subscriptionId: string;
  url: string;
  /**
   * The current secret, then the previous one while a rotation's overlap lasts, decrypted
   * when the attempt signs: a secret this process has no key for (a replica started with
   * another key list) fails that attempt alone, which another replica then makes.
   */
  secrets: () => string[];
}

export interface DeliveryOutcome {
  delivery: ClaimedDelivery;
  status: DeliveryStatus;
  /** For 'pending': when to try again. */
  retryInMs: number;
}

/** A subscription disabled for failing, and how many pending deliveries it gave up. */
export interface DisabledSubscription {
  id: string;
  failingSince: Date;
  givenUp: number;
}

/** What the stored signing secrets need of this process, read at start. */
export interface SecretsAtRest {
  /** One ciphertext per key id, with where it is stored (its key must open it there). */
  sealed: { ciphertext: string; place: SecretPlace }[];
  /** Subscriptions that still hold a clear `secret`. */
  clearSecrets: number;
  /** Whether the contract step retired clear secrets (see CLEAR_SECRETS_RETIRED). */
  clearSecretsRetired: boolean;
}

/** Where a subscription stands after a batch of attempts. */
export interface SubscriptionStatus {
  id: string;
  lastStatus: number | null;
  lastError: string | null;
  /** Some attempt in the batch succeeded: the count starts again from 0. */
  succeeded: boolean;
  /** Failed attempts after the last success (or all of them, when none succeeded). */
  failuresAfter: number;
}

/**
 * The subscriptions (through TypeORM), the events each new plant writes (through the
 * plants' outbox) and the deliveries (SQL on pg's pool). Signing secrets are encrypted
 * here on their way in and decrypted on their way out (WebhookSecretKeyring): the database
 * never holds one in clear.
 */
@Injectable()
export class WebhooksRepository implements OnModuleInit {
  private readonly pool: pg.Pool;

  constructor(
    @InjectRepository(WebhookSubscription)
    private readonly subscriptions: Repository<WebhookSubscription>,
    private readonly createdPlants: CreatedPlantsOutbox,
    private readonly keyring: WebhookSecretKeyring,
  ) {
    this.pool = postgresPool(subscriptions.manager.dataSource);
  }

  /**
   * Whether a clear `secret` (which only the release before encryption writes, during a
   * rollout) may sign: no longer once the contract step has retired clear secrets.
   */
  private signsWithClearSecrets = true;

  /** Called at start when the contract step has been run: no clear secret signs again. */
  refuseClearSecrets(): void {
    this.signsWithClearSecrets = false;
  }

  /** Before the first create: from then on, every new plant writes its event. */
  onModuleInit(): void {
    this.createdPlants.add(NEW_PLANT_EVENTS);
  }

  /** In `manager`'s transaction, as are the other changes a person makes (see AuditTrail). */
  create(
    manager: EntityManager,
    {
      url,
      description,
      secret,
    }: Pick<WebhookSubscription, 'url' | 'description'> & {
      secret: string;
    },
  ): Promise<WebhookSubscription> {
    // The id is chosen here: the secret is sealed for its subscription.
    const id = randomUUID();
    const secretEncrypted = this.keyring.encrypt(secret, {
      subscriptionId: id,
      column: 'secret_encrypted',
    });
    return manager.save(
      manager.create(WebhookSubscription, { id, url, description, secret: null, secretEncrypted }),
    );
  }

  /**
   * Up to `count` subscriptions (all without it) after the key `after`
   * (WEBHOOKS_OLDEST_FIRST), oldest first.
   */
  findPage(after: Key | undefined, count?: number): Promise<WebhookSubscription[]> {
    return WEBHOOKS_OLDEST_FIRST.page(
      this.subscriptions.createQueryBuilder('subscription'),
      after,
      count,
    ).getMany();
  }

  findById(id: string): Promise<WebhookSubscription | null> {
    return this.subscriptions.findOneBy({ id });
  }

  /**
   * Deletes the subscription, and its deliveries with it.
   * @returns what it was sent to; null when there is no such subscription.
   */
  async delete(manager: EntityManager, id: string): Promise<{ url: string } | null> {
    const [deleted]: { url: string }[] = await manager.query(DELETE, [id]);
    return deleted ?? null;
  }

  /** @returns how many deliveries are sent again; null when there is no such subscription. */
  async redeliverFailed(manager: EntityManager, subscriptionId: string): Promise<number | null> {
    const [subscription]: { redelivered: number }[] = await manager.query(REDELIVER_FAILED, [
      subscriptionId,
    ]);
    return subscription?.redelivered ?? null;
  }

  /**
   * @param busy subscriptions with all their attempts in flight in this process
   * @returns how many events became deliveries.
   */
  async fanOut(limit: number, busy: string[]): Promise<number> {
    const { rows } = await this.pool.query<{ events: number }>(FAN_OUT, [limit, busy]);
    return rows[0].events;
  }

  /** @param inFlight attempts this process has in flight, by subscription id */
  async claimDue(
    limit: number,
    leaseMs: number,
    maxInFlightPerSubscription: number,
    inFlight: ReadonlyMap<string, number>,
    leaseOwner: string,
  ): Promise<ClaimedDelivery[]> {
    const { rows } = await this.pool.query<{
      id: string;
      message_id: string;
      payload: string;
      attempts: number;
      created_seconds_ago: number;
      trace_context: string | null;
      subscription_id: string;
      url: string;
      secret: string | null;
      secret_encrypted: string | null;
      previous_secret: string | null;
      previous_secret_expires_at: Date | null;
    }>(CLAIM_DUE, [
      limit,
      leaseMs,
      maxInFlightPerSubscription,
      [...inFlight.keys()],
      [...inFlight.values()],
      leaseOwner,
    ]);
    const claimedAt = performance.now();
    return rows.map((row) => ({
      id: row.id,
      messageId: row.message_id,
      payload: row.payload,
      attempts: row.attempts,
      createdSecondsAgo: row.created_seconds_ago,
      claimedAt,
      traceContext: row.trace_context,
      subscriptionId: row.subscription_id,
      url: row.url,
      secrets: () => [
        row.secret_encrypted === null
          ? this.signingClearSecret(row.secret)
          : this.keyring.decrypt(row.secret_encrypted, {
              subscriptionId: row.subscription_id,
              column: 'secret_encrypted',
            }),
        ...(row.previous_secret === null
          ? []
          : [
              this.keyring.decrypt(row.previous_secret, {
                subscriptionId: row.subscription_id,
                column: 'previous_secret',
                expiresAt: row.previous_secret_expires_at,
              }),
            ]),
      ],
    }));
  }

  /** RELEASE_LEASES: answers how many leases `leaseOwner` ended. */
  async releaseLeases(leaseOwner: string, sending: Iterable<string>): Promise<number> {
    const { rowCount } = await this.pool.query(RELEASE_LEASES, [leaseOwner, [...sending]]);
    return rowCount ?? 0;
  }

  async recordOutcomes(outcomes: DeliveryOutcome[], statuses: SubscriptionStatus[]): Promise<void> {
    await this.pool.query(RECORD_OUTCOMES, [
      outcomes.map(({ delivery }) => delivery.id),
      outcomes.map(({ delivery }) => delivery.attempts),
      outcomes.map(({ status }) => status),
      outcomes.map(({ retryInMs }) => retryInMs),
      statuses.map(({ id }) => id),
      statuses.map(({ lastStatus }) => lastStatus),
      statuses.map(({ lastError }) => lastError),
      statuses.map(({ succeeded }) => succeeded),
      statuses.map(({ failuresAfter }) => failuresAfter),
    ]);
  }

  /** Of `subscriptionIds`, disables those that have failed for `failingMs` or longer. */
  async disableFailing(
    subscriptionIds: string[],
    failingMs: number,
  ): Promise<DisabledSubscription[]> {
    const { rows } = await this.pool.query<{ id: string; failing_since: Date; given_up: number }>(
      DISABLE_FAILING,
      [subscriptionIds, failingMs],
    );
    return rows.map((row) => ({
      id: row.id,
      failingSince: row.failing_since,
      givenUp: row.given_up,
    }));
  }

  /**
   * @returns when the subscription had been disabled (null: it was enabled already);
   * undefined when there is no such subscription.
   */
  async enable(
    manager: EntityManager,
    id: string,
  ): Promise<{ disabledAt: Date | null } | undefined> {
    const [enabled]: { disabled_at: Date | null }[] = await manager.query(ENABLE, [id]);
    return enabled && { disabledAt: enabled.disabled_at };
  }

  /**
   * @returns when the previous secret stops signing (null: it stopped at once); undefined
   * when there is no such subscription.
   */
  async rotateSecret(
    manager: EntityManager,
    id: string,
    secret: string,
    overlapSeconds: number,
  ): Promise<{ previousSecretExpiresAt: Date | null } | undefined> {
    const [stored]: {
      secret: string | null;
      secret_encrypted: string | null;
      overlap_ends_at: Date;
    }[] = await manager.query(LOCK_SECRET, [id, overlapSeconds]);
    if (!stored) return undefined;
    const current =
      stored.secret_encrypted === null
        ? this.usableClearSecret(stored.secret)
        : this.keyring.decrypt(stored.secret_encrypted, {
            subscriptionId: id,
            column: 'secret_encrypted',
          });
    // Without a current secret that may sign, there is nothing to overlap with.
    const expiresAt = overlapSeconds > 0 && current !== null ? stored.overlap_ends_at : null;
    const previous =
      expiresAt &&
      this.keyring.encrypt(current!, { subscriptionId: id, column: 'previous_secret', expiresAt });
    await manager.query(ROTATE_SECRET, [
      id,
      this.keyring.encrypt(secret, { subscriptionId: id, column: 'secret_encrypted' }),
      expiresAt,
      previous,
    ]);
    return { previousSecretExpiresAt: expiresAt };
  }

  /**
   * What the start check reads; nothing sealed while the schema has no encrypted secrets
   * yet (a job still to migrate it).
   */
  async secretsAtRest(): Promise<SecretsAtRest> {
    try {
      const { rows } = await this.pool.query<{
        sealed: { sealed: string; id: string; column_name: string; expires_at: string | null }[];
        clear: number;
        retired: boolean;
      }>(SECRETS_AT_REST);
      const [{ sealed, clear, retired }] = rows;
      return {
        sealed: sealed.map((stored) => ({
          ciphertext: stored.sealed,
          place: {
            subscriptionId: stored.id,
            column: stored.column_name as SecretPlace['column'],
            expiresAt: stored.expires_at === null ? null : new Date(stored.expires_at),
          },
        })),
        clearSecrets: clear,
        clearSecretsRetired: retired,
      };
    } catch (error) {
      if (isSchemaNotMigratedYet(error)) {
        return { sealed: [], clearSecrets: 0, clearSecretsRetired: false };
      }
      throw error;
    }
  }

  /** A clear secret may sign only until the contract step. */
  private usableClearSecret(secret: string | null): string | null {
    return this.signsWithClearSecrets ? secret : null;
  }

  /** @throws SecretKeyError when the subscription has no secret that may sign. */
  private signingClearSecret(secret: string | null): string {
    const usable = this.usableClearSecret(secret);
    if (usable === null) {
      throw new SecretKeyError(
        'the subscription has no encrypted secret, and webhook-secrets re-encrypt retired clear secrets',
      );
    }
    return usable;
  }

  async disabledCount(): Promise<number> {
    const { rows } = await this.pool.query<{ disabled: number }>(DISABLED_COUNT);
    return rows[0].disabled;
  }

  /**
   * One batch of the retention sweep, in a short transaction of its own holding the
   * sweep's advisory lock: removes up to `limit` delivered and failed deliveries created
   * more than `olderThanMs` ago, from creation time `from` on ('-infinity': the first).
   * @returns undefined when another process holds the lock (it is sweeping).
   */
  async removeExpiredDeliveries(
    olderThanMs: number,
    from: Date | '-infinity',
    limit: number,
    { statementTimeoutMs, lockTimeoutMs }: SweepLimits,
  ): Promise<RemovedBatch | undefined> {
    const client = await this.pool.connect();
    let failure: Error | undefined;
    try {
      await client.query('BEGIN');
      const {
        rows: [lock],
      } = await client.query<{ locked: boolean }>(LOCK_FOR_SWEEP, [
        `${statementTimeoutMs}ms`,
        `${lockTimeoutMs}ms`,
        RETENTION_SWEEP_LOCK_KEY,
      ]);
      if (!lock.locked) {
        await client.query('ROLLBACK');
        return undefined;
      }
      const {
        rows: [batch],
      } = await client.query<RemovedBatch>(REMOVE_EXPIRED_DELIVERIES, [olderThanMs, limit, from]);
      await client.query('COMMIT');
      return batch;
    } catch (error) {
      failure = error as Error;
      throw error;
    } finally {
      // A connection that failed mid-transaction is closed, not handed back in it.
      client.release(failure);
    }
  }

  /**
   * Erases the previous secrets whose overlap has ended (they can no longer sign: their end
   * is sealed with them) and their ends. A few rows at most, one per receiver.
   */
  async eraseEndedPreviousSecrets(): Promise<number> {
    const { rowCount } = await this.pool.query(ERASE_ENDED_PREVIOUS_SECRETS);
    return rowCount ?? 0;
  }

  async longestFailingSeconds(): Promise<number> {
    const { rows } = await this.pool.query<{ seconds: number }>(LONGEST_FAILING);
    return rows[0].seconds;
  }

  async queueAgeSeconds(): Promise<number> {
    const { rows } = await this.pool.query<{ seconds: number }>(QUEUE_AGE);
    return rows[0].seconds;
  }
}
