import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { issueToken, send, startService, type ServiceProcess } from '../support/built-service.js';
import { startHaproxy, type Balancer } from '../support/haproxy.js';
import { startPgBouncer, type Pooler } from '../support/pgbouncer.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

const REPLICAS = 3;
const WORKERS = 8;
/** Readiness fails this long before a stopping replica refuses connections. */
const SHUTDOWN_DELAY_MS = 1_500;
/** Attempts per create: a retry is safe, since a replay answers 200 (README). */
const ATTEMPTS = 5;

/**
 * The scale-out story on real engines: three replicas started together on an empty
 * database, behind HAProxy, through PgBouncer in transaction mode, counting the rate
 * limit in Redis. One replica is stopped as a rolling update stops it, another is killed.
 */
describe('replicas behind HAProxy, through PgBouncer, with Redis', () => {
  let redis: RedisServer;
  let pooler: Pooler;
  let database: TestDatabase;
  let replicas: ServiceProcess[] = [];
  let balancer: Balancer;
  let token: string;
  let nextId = 1;

  beforeAll(async () => {
    redis = await startRedisServer();
    pooler = await startPgBouncer(inject('databaseAdminUrl'));
    database = await createTestDatabase();
    const env = {
      DATABASE_URL: pooler.urlFor(database.url),
      DATABASE_DIRECT_URL: database.url,
      REDIS_URL: redis.url,
      RATE_LIMIT_PER_MINUTE: '1000000',
      SHUTDOWN_DELAY_MS: String(SHUTDOWN_DELAY_MS),
    };
    const started = await Promise.all(
      Array.from({ length: REPLICAS }, () => startService(env, { forgetOutput: true })),
    );
    replicas = started.map(({ service }) => service);
    balancer = await startHaproxy(started.map(({ url }) => url));
    token = await issueToken(database.url, 'scale');
  });
  afterAll(async () => {
    await balancer?.stop();
    await Promise.all(replicas.map((replica) => replica.stop()));
    await pooler?.stop();
    await redis?.stop();
    await database?.drop();
  });

  /** Creates one plant through the balancer; the outcome of each attempt, last one last. */
  async function create(): Promise<{ id: number; outcomes: string[] }> {
    const id = nextId++;
    const outcomes: string[] = [];
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const outcome = await send(`${balancer.url}/plants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ id, name: `plant ${id}` }),
      }).then(
        ({ status }) => String(status),
        (error: Error) => error.message,
      );
      outcomes.push(outcome);
      if (outcome === '200') break;
      await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** attempt));
    }
    return { id, outcomes };
  }

  /** WORKERS clients creating one plant after another until `until` settles. */
  async function underLoad(until: Promise<unknown>) {
    let done = false;
    void until.finally(() => (done = true));
    const results: { id: number; outcomes: string[] }[] = [];
    await Promise.all(
      Array.from({ length: WORKERS }, async () => {
        while (!done) results.push(await create());
      }),
    );
    return results;
  }

  it('became ready together on an empty database, applying each migration once', async () => {
    const [{ count }] = await database.query<{ count: number }>(
      'SELECT count(*)::int AS count FROM migrations',
    );
    expect(count).toBe(2);
    expect((await send(`${balancer.url}/health/ready`)).status).toBe(200);
  });

  it('loses no request while a replica stops as in a rolling update (SIGTERM)', async () => {
    const stopping = replicas[0];
    const results = await underLoad(
      (async () => {
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        stopping.signal('SIGTERM');
        expect(await stopping.exited).toEqual({ code: 0, signal: null });
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      })(),
    );
    expect(results.length).toBeGreaterThan(100);
    expect(results.filter(({ outcomes }) => outcomes.join() !== '200')).toEqual([]);
    await expectStored(results);
  });

  it('answers every create, retried, when a replica is killed (kill -9), and stores each once', async () => {
    const killed = replicas[1];
    const results = await underLoad(
      (async () => {
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        killed.signal('SIGKILL');
        await killed.exited;
        await new Promise((resolve) => setTimeout(resolve, 2_000));
      })(),
    );
    expect(results.every(({ outcomes }) => outcomes.at(-1) === '200')).toBe(true);
    // Only the requests the killed replica held when it died needed a retry.
    const retried = results.filter(({ outcomes }) => outcomes.length > 1);
    expect(retried.length).toBeLessThanOrEqual(WORKERS);
    await expectStored(results);
  });

  async function expectStored(results: { id: number }[]) {
    const ids = results.map(({ id }) => id);
    const [{ count }] = await database.query<{ count: number }>(
      `SELECT count(*)::int AS count FROM plants WHERE id IN (${ids.join(',')})`,
    );
    expect(count).toBe(ids.length);
  }
});
