import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { APP_SCHEMA } from '../../src/app.schema.js';
import {
  runMigrationCli,
  runTokenCli,
  send,
  type Exit,
  type ServiceOptions,
} from '../support/built-service.js';
import { startPgBouncer, type Pooler } from '../support/pgbouncer.js';
import {
  buildPreviousRelease,
  type PreviousReleaseBuild,
} from '../support/previous-release-build.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { ReplicaSet } from '../support/replica-set.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { verifySignature, WebhookReceiver } from '../support/webhook-receiver.js';

const REPLICAS = 3;
/** Creates a second through the balancer, and as many reads, for the whole test. */
const REQUESTS_PER_SECOND = 20;
/** Readiness fails this long before a stopping replica refuses connections. */
const SHUTDOWN_DELAY_MS = 1_500;
/** How long the previous release serves alone on the new schema. */
const WINDOW_MS = 3_000;
/** The load goes on this long after a rollout, before its requests are judged. */
const AFTER_ROLLOUT_MS = 1_000;
/** How long every acknowledged create's deliveries may take to reach both receivers. */
const DELIVERY_LIMIT_MS = 15_000;
/** Reads at once when every acknowledged plant is read back at the end. */
const FINAL_READS_AT_ONCE = 20;
const CURRENT_MIGRATIONS = APP_SCHEMA.migrations.map(({ name }) => name).sort();

const nameOf = (id: number) => `plant ${id}`;

/** One request sent through the balancer, and how it was answered. */
interface Sent {
  kind: 'create' | 'read';
  id: number;
  /** When it was sent, in ms since the load began. */
  at: number;
  /** `ok`, or the status and body answered, or the error. */
  outcome: string;
}

/**
 * Creates, and reads of plants already acknowledged, through the balancer at a steady pace
 * until stopped. Each is sent once, on a new connection: a retry would hide a failure, and
 * HAProxy (`http-reuse safe`) then sends each on a connection of its own to a replica.
 */
class SteadyLoad {
  /** Each create answered 200, by id. */
  readonly acknowledged: number[] = [];
  private pending: Promise<Sent>[] = [];
  private nextId = 1;
  private readonly startedAt = performance.now();
  private readonly pace: NodeJS.Timeout;

  constructor(
    private readonly url: string,
    private readonly token: string,
  ) {
    this.pace = setInterval(() => {
      this.pending.push(this.create());
      if (this.acknowledged.length > 0) this.pending.push(this.read());
    }, 1_000 / REQUESTS_PER_SECOND);
  }

  /** Every request sent since the last take, once each has its answer or its error. */
  take(): Promise<Sent[]> {
    return Promise.all(this.pending.splice(0));
  }

  /** Stops sending; the requests not taken yet. */
  stop(): Promise<Sent[]> {
    clearInterval(this.pace);
    return this.take();
  }

  private async create(): Promise<Sent> {
    const id = this.nextId++;
    const at = performance.now() - this.startedAt;
    const outcome = await send(`${this.url}/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id, name: nameOf(id) }),
    }).then(
      ({ status, body }) => (status === 200 ? 'ok' : `${status} ${body}`),
      (error: Error) => error.message,
    );
    if (outcome === 'ok') this.acknowledged.push(id);
    return { kind: 'create', id, at, outcome };
  }

  private async read(): Promise<Sent> {
    const id = this.acknowledged[Math.floor(Math.random() * this.acknowledged.length)];
    const at = performance.now() - this.startedAt;
    const outcome = await readPlant(this.url, this.token, id).catch(
      (error: Error) => error.message,
    );
    return { kind: 'read', id, at, outcome };
  }
}

/** `ok` when the plant reads back as it was created; otherwise the status and body. */
async function readPlant(url: string, token: string, id: number): Promise<string> {
  const { status, body } = await send(`${url}/plants/${id}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const read = status === 200 ? (JSON.parse(body) as { id: number; name: string }) : undefined;
  return read?.id === id && read.name === nameOf(id) ? 'ok' : `${status} ${body}`;
}

/**
 * The upgrade of issue 34, on real engines: the previous release, built from git, as three
 * replicas behind HAProxy (through PgBouncer, with Redis, as the compose stack runs them)
 * with two webhook subscriptions and a steady load; this tree's migrations applied while it
 * serves; its replicas replaced one at a time by this tree's, each new one in rotation
 * before an old one stops; then rolled back the same way, on the schema the upgrade left.
 */
describe('upgrading the previous release to this tree, and rolling back, under load', () => {
  let previous: PreviousReleaseBuild;
  let database: TestDatabase;
  let redis: RedisServer;
  let pooler: Pooler;
  const receivers: WebhookReceiver[] = [];
  /** Each receiver's subscription secret, in the receivers' order. */
  const secrets: string[] = [];
  let set: ReplicaSet;
  let token: string;
  let load: SteadyLoad | undefined;
  let previousRelease: ServiceOptions;
  const thisTree: ServiceOptions = { forgetOutput: 'request lines' };

  const appliedMigrations = async () =>
    (await database.query<{ name: string }>('SELECT name FROM migrations'))
      .map(({ name }) => name)
      .sort();

  /**
   * Resolves once both receivers have every one of these plants, or after
   * DELIVERY_LIMIT_MS; each receiver's deliveries of them.
   */
  async function deliveriesOf(ids: number[]) {
    const wanted = new Set(ids);
    const deadline = Date.now() + DELIVERY_LIMIT_MS;
    const deliveries = () =>
      receivers.map((receiver) =>
        receiver.received.filter(({ body }) => wanted.has((JSON.parse(body) as { id: number }).id)),
      );
    const complete = () =>
      deliveries().every(
        (received) =>
          new Set(received.map(({ body }) => (JSON.parse(body) as { id: number }).id)).size ===
          wanted.size,
      );
    while (!complete() && Date.now() < deadline) await sleep(50);
    return deliveries();
  }

  /**
   * Judges what was sent during a part of the test: every request answered as expected,
   * every acknowledged create stored and delivered, signed, to both receivers. Prints the
   * figures first, with `figures`.
   */
  async function expectServed(part: string, requests: Sent[], figures: Record<string, unknown>) {
    const failed = requests.filter(({ outcome }) => outcome !== 'ok');
    const acknowledged = requests
      .filter(({ kind, outcome }) => kind === 'create' && outcome === 'ok')
      .map(({ id }) => id);
    const deliveries = await deliveriesOf(acknowledged);
    const rows =
      acknowledged.length === 0
        ? []
        : await database.query<{ id: string; name: string }>(
            `SELECT id::text, name FROM plants WHERE id IN (${acknowledged.join(',')})`,
          );
    const stored = new Map(rows.map(({ id, name }) => [Number(id), name]));
    console.info(
      JSON.stringify({
        part,
        ...figures,
        requests: requests.length,
        failed: failed.length,
        createsAcknowledged: acknowledged.length,
        deliveries: deliveries.map((received) => received.length),
        loadAverage: loadavg()[0],
      }),
    );
    expect(failed).toEqual([]);
    expect(requests.filter(({ kind }) => kind === 'create').length).toBeGreaterThan(
      REQUESTS_PER_SECOND,
    );
    expect(acknowledged.filter((id) => stored.get(id) !== nameOf(id))).toEqual([]);
    const undelivered = deliveries.map((received) => {
      const ids = new Set(received.map(({ body }) => (JSON.parse(body) as { id: number }).id));
      return acknowledged.filter((id) => !ids.has(id));
    });
    expect(undelivered).toEqual(receivers.map(() => []));
    deliveries.forEach((received, index) => {
      for (const delivery of received) verifySignature(secrets[index], delivery);
    });
  }

  /** Replaces every replica, surging, with ones started with `options`; how long it took. */
  async function roll(options: ServiceOptions): Promise<number> {
    const startedAt = performance.now();
    const exits: Exit[] = [];
    for (let index = 0; index < REPLICAS; index++) exits.push(await set.surge(index, options));
    const rollMs = Math.round(performance.now() - startedAt);
    expect(exits).toEqual(exits.map(() => ({ code: 0, signal: null })));
    return rollMs;
  }

  beforeAll(async () => {
    previous = await buildPreviousRelease();
    console.info(
      `previous release: ${previous.ref} (${previous.commit.slice(0, 12)}; ${previous.reason}), ` +
        `built in ${(previous.buildMs / 1_000).toFixed(1)} s`,
    );
    previousRelease = { ...thisTree, buildDir: previous.dir };
    database = await createTestDatabase();
    redis = await startRedisServer();
    pooler = await startPgBouncer(inject('databaseAdminUrl'));
    for (let index = 0; index < 2; index++) receivers.push(await WebhookReceiver.start());

    // The previous release as it was deployed: its migrations, by its own job, and one
    // role for everything (the owner), as every deployment before the two roles.
    const direct = { DATABASE_URL: database.migrationUrl };
    const migrated = await runMigrationCli(['run'], direct, previous.dir);
    expect(migrated.code, migrated.stderr).toBe(0);
    const tokens = await Promise.all(
      [
        ['create', '--name', 'load'],
        ['create', '--name', 'hooks', '--scopes', 'webhooks:manage'],
      ].map((args) => runTokenCli(args, direct, previous.dir)),
    );
    for (const { code, stderr } of tokens) expect(code, stderr).toBe(0);
    token = tokens[0].stdout.trim();

    set = await ReplicaSet.start(
      REPLICAS,
      {
        DATABASE_URL: pooler.urlFor(database.migrationUrl),
        DATABASE_DIRECT_URL: database.migrationUrl,
        REDIS_URL: redis.url,
        MIGRATIONS_AT_START: 'false',
        RATE_LIMIT_PER_MINUTE: '1000000',
        SHUTDOWN_DELAY_MS: String(SHUTDOWN_DELAY_MS),
        WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
      },
      previousRelease,
      1,
    );
    for (const { url } of receivers) {
      const { status, body } = await send(`${set.balancer.url}/webhooks`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${tokens[1].stdout.trim()}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ url }),
      });
      expect(status, body).toBe(201);
      secrets.push((JSON.parse(body) as { secret: string }).secret);
    }
    load = new SteadyLoad(set.balancer.url, token);
  });

  afterAll(async () => {
    await load?.stop();
    await set?.stop();
    for (const receiver of receivers) await receiver.stop();
    await pooler?.stop();
    await redis?.stop();
    await database?.drop();
    await previous?.remove();
  });

  it("applies this tree's migrations while the previous release serves, which keeps answering on the new schema; then replaces its replicas one at a time, each new one in rotation before an old one stops", async () => {
    const before = await load!.take();
    const previousMigrations = await appliedMigrations();
    const migrationStartedAt = performance.now();
    const migration = await runMigrationCli(['run'], { DATABASE_URL: database.migrationUrl });
    const migrationMs = Math.round(performance.now() - migrationStartedAt);
    expect(migration.code, migration.stderr).toBe(0);
    expect(await appliedMigrations()).toEqual(CURRENT_MIGRATIONS);

    // Only the previous release serves, on the new schema; its deliveries are awaited
    // before a replica of this tree starts.
    await sleep(WINDOW_MS);
    await expectServed('previous release on the new schema', [...before, ...(await load!.take())], {
      migrationsApplied: CURRENT_MIGRATIONS.filter((name) => !previousMigrations.includes(name)),
      migrationMs,
      windowMs: WINDOW_MS,
    });

    const rollMs = await roll(thisTree);
    await sleep(AFTER_ROLLOUT_MS);
    await expectServed('upgrade', await load!.take(), { replicas: REPLICAS, rollMs });
  });

  it('rolls back to the previous release the same way, on the schema the upgrade left', async () => {
    const rollMs = await roll(previousRelease);
    await sleep(AFTER_ROLLOUT_MS);
    const sent = await load!.stop();
    await expectServed('rollback', sent, { replicas: REPLICAS, rollMs });
    expect(await appliedMigrations()).toEqual(CURRENT_MIGRATIONS);

    // Every create acknowledged in the whole test reads back through the balancer.
    const { acknowledged } = load!;
    const unreadable: string[] = [];
    for (let first = 0; first < acknowledged.length; first += FINAL_READS_AT_ONCE) {
      const outcomes = await Promise.all(
        acknowledged
          .slice(first, first + FINAL_READS_AT_ONCE)
          .map(async (id) => [id, await readPlant(set.balancer.url, token, id)] as const),
      );
      unreadable.push(...outcomes.filter(([, outcome]) => outcome !== 'ok').map(String));
    }
    console.info(JSON.stringify({ createsAcknowledged: acknowledged.length, unreadable }));
    expect(unreadable).toEqual([]);
  });
});
