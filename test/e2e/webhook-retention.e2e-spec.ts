import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, inject, it } from 'vitest';
import { AppConfig } from '../../src/config/app-config.js';
import { RETENTION_BATCH } from '../../src/webhooks/retention/delivery-retention.service.js';
import { RETENTION_SWEEP_LOCK_KEY } from '../../src/webhooks/webhooks.repository.js';
import { plantsClient } from '../support/plants-client.js';
import { buildApp, createTestApp, type TestApp } from '../support/test-app.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { TEST_WEBHOOK_SECRET_KEYS } from '../support/webhook-secret-keys.js';
import { webhooksClient } from '../support/webhooks-client.js';

/**
 * An hour's retention, swept every second; a failed attempt is tried again an hour later
 * (so a delivery stays pending until the test makes it due), and the second attempt is
 * the last.
 */
const RETENTION = {
  WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
  WEBHOOK_POLL_INTERVAL_MS: '20',
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_RETRY_BASE_MS: '3600000',
  WEBHOOK_MAX_ATTEMPTS: '2',
  WEBHOOK_DELIVERY_RETENTION: '1h',
  RETENTION_SWEEP_INTERVAL_MS: '1000',
};
/** Longer than a few sweeps. */
const SEVERAL_SWEEPS_MS = 3_500;
const REMOVED = 'retention_rows_removed_total{table="webhook_deliveries"}';
const LAST_SUCCESS = 'retention_sweep_last_success_timestamp_seconds';

interface DeliveryRow {
  subscription: string;
  plant: number;
  status: string;
}

/** A sample of `app`'s /metrics; undefined when the series is absent. */
async function metric(app: NestFastifyApplication, series: string): Promise<number | undefined> {
  const { body } = await app.inject({ url: '/metrics', remoteAddress: '192.0.2.8' });
  const escaped = series.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const value = new RegExp(`^${escaped} (\\S+)$`, 'm').exec(body)?.[1];
  return value === undefined ? undefined : Number(value);
}

async function until(condition: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(50);
  }
}

describe('webhook deliveries are kept for WEBHOOK_DELIVERY_RETENTION', () => {
  const receivers: WebhookReceiver[] = [];
  const apps: TestApp[] = [];
  let nextId = 1;

  /** A test application on a database of its own, with receivers that take and refuse. */
  const start = async (env: Record<string, string> = {}) => {
    const api = await createTestApp({ ...RETENTION, ...env });
    apps.push(api);
    const plants = plantsClient(api, await api.issueToken());
    const webhooks = webhooksClient(api, await api.issueToken({ scopes: ['webhooks:manage'] }));
    const subscribe = async (answer: number) => {
      const receiver = await WebhookReceiver.start();
      receiver.answer = () => answer;
      receivers.push(receiver);
      const response = await webhooks.subscribe({ url: receiver.url });
      expect(response.statusCode).toBe(201);
      return { receiver, id: response.json<{ id: string }>().id };
    };
    const create = async (count: number) => {
      const ids = Array.from({ length: count }, () => nextId++);
      for (const id of ids) {
        expect((await plants.create({ id, name: `plant ${id}` })).statusCode).toBe(200);
      }
      return ids;
    };
    const deliveries = () =>
      api.database.query<DeliveryRow>(`
        SELECT subscription_id::text AS subscription, (payload::json->>'id')::integer AS plant, status
        FROM webhook_deliveries ORDER BY subscription_id, plant`);
    /** Sets the creation time of `plants`' deliveries to `age` ago. */
    const age = (plantIds: number[], interval: string) =>
      api.database.query(`
        UPDATE webhook_deliveries SET created_at = now() - interval '${interval}'
        WHERE (payload::json->>'id')::integer IN (${plantIds.join(',')})`);
    return { api, plants, webhooks, subscribe, create, deliveries, age };
  };

  afterEach(async () => {
    for (const api of apps.splice(0)) await api.close();
    for (const receiver of receivers.splice(0)) await receiver.stop();
  });

  it('removes delivered and failed deliveries older than the retention, keeps pending ones whatever their age and newer ones, counts what it removed, and redelivers inside the window', async () => {
    const { api, webhooks, subscribe, create, deliveries, age } = await start();
    const taking = await subscribe(200);
    const refusing = await subscribe(500);
    const [old1, old2, old3, recent, fresh] = await create(5);
    await taking.receiver.waitFor(5);
    // Each of the refusing receiver's deliveries is pending after its first attempt, the
    // next one an hour away; made due now, the second and last attempt fails it.
    await until(
      async () =>
        (
          await api.database.query<{ attempted: number }>(`
        SELECT count(*)::integer AS attempted FROM webhook_deliveries
        WHERE subscription_id = '${refusing.id}' AND attempts = 1
          AND next_attempt_at > now() + interval '30 minutes'`)
        )[0].attempted === 5,
    );
    await api.database.query(`
      UPDATE webhook_deliveries SET next_attempt_at = now()
      WHERE subscription_id = '${refusing.id}'
        AND (payload::json->>'id')::integer IN (${old1}, ${old2}, ${recent})`);
    await until(
      async () => (await deliveries()).filter(({ status }) => status === 'failed').length === 3,
    );
    const messageIdOfRecent = String(
      refusing.receiver.received.find(({ body }) => JSON.parse(body).id === recent)!.headers[
        'webhook-id'
      ],
    );

    await age([old1, old2, old3], '2 hours');
    await age([recent], '30 minutes');
    const kept = [
      { subscription: taking.id, plant: recent, status: 'delivered' },
      { subscription: taking.id, plant: fresh, status: 'delivered' },
      { subscription: refusing.id, plant: old3, status: 'pending' },
      { subscription: refusing.id, plant: recent, status: 'failed' },
      { subscription: refusing.id, plant: fresh, status: 'pending' },
    ].sort((a, b) =>
      a.subscription === b.subscription
        ? a.plant - b.plant
        : a.subscription < b.subscription
          ? -1
          : 1,
    );
    await until(async () => (await deliveries()).length === kept.length);
    expect(await deliveries()).toEqual(kept);
    expect(await metric(api.app, REMOVED)).toBe(5);
    expect(await metric(api.app, LAST_SUCCESS)).toBeGreaterThan(Date.now() / 1000 - 5);
    for (const table of [
      'plants',
      'webhook_events',
      'webhook_deliveries',
      'audit_events',
      'api_tokens',
    ]) {
      expect(await metric(api.app, `db_table_bytes{table="${table}"}`)).toBeGreaterThan(0);
    }

    // Inside the window a failed delivery is sent again, with its webhook-id; the two older
    // than the window are gone, and are not.
    refusing.receiver.answer = () => 200;
    const received = refusing.receiver.received.length;
    const redeliver = await webhooks.redeliver(refusing.id);
    expect(redeliver.statusCode).toBe(202);
    expect(redeliver.json()).toEqual({ redelivered: 1 });
    const [again] = (await refusing.receiver.waitFor(received + 1)).slice(received);
    expect(JSON.parse(again.body)).toEqual({ id: recent, name: `plant ${recent}` });
    expect(again.headers['webhook-id']).toBe(messageIdOfRecent);
  });

  it('WEBHOOK_DELIVERY_RETENTION=forever removes nothing', async () => {
    const { api, subscribe, create, deliveries, age } = await start({
      WEBHOOK_DELIVERY_RETENTION: 'forever',
    });
    const taking = await subscribe(200);
    const ids = await create(3);
    await taking.receiver.waitFor(3);
    await until(async () => (await deliveries()).every(({ status }) => status === 'delivered'));
    await age(ids, '3650 days');
    await sleep(SEVERAL_SWEEPS_MS);
    expect(await deliveries()).toHaveLength(3);
    expect(await metric(api.app, REMOVED)).toBe(0);
    expect(await metric(api.app, LAST_SUCCESS)).toBeUndefined();
  });

  describe('two processes on one database, the second as a role granted only DML', () => {
    const role = `plant_store_test_dml_${randomBytes(4).toString('hex')}`;
    let server: pg.Client | undefined;

    afterAll(async () => {
      await server?.query(`DROP ROLE IF EXISTS ${role}`);
      await server?.end();
    });

    it('only the process holding the sweep lock sweeps: while another holds it neither removes a row; then the DML role sweeps thousands of rows in batches', async () => {
      const { api, subscribe, deliveries } = await start();
      const { id: subscriptionId } = await subscribe(200);
      server = new pg.Client({ connectionString: inject('databaseAdminUrl') });
      await server.connect();
      await server.query(`CREATE ROLE ${role} LOGIN PASSWORD '${role}'`);
      const owner = new pg.Client({ connectionString: api.database.migrationUrl });
      await owner.connect();
      await owner.query(
        `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role}`,
      );
      const roleUrl = new URL(api.database.url);
      roleUrl.username = role;
      roleUrl.password = role;
      const second = await buildApp(
        AppConfig.fromEnvironment({
          ...RETENTION,
          LOG_LEVEL: 'silent',
          RATE_LIMIT_PER_MINUTE: '0',
          WEBHOOK_SECRET_KEYS: TEST_WEBHOOK_SECRET_KEYS,
          MIGRATIONS_AT_START: 'false',
          DATABASE_URL: roleUrl.toString(),
        }),
      );
      try {
        // As a process in the middle of a sweep holds it.
        await owner.query('SELECT pg_advisory_lock($1)', [RETENTION_SWEEP_LOCK_KEY]);
        // Delivered two hours ago and more, seven to a second: batches end between equal times.
        const expired = 2 * RETENTION_BATCH + 500;
        await owner.query(
          `INSERT INTO webhook_deliveries (subscription_id, payload, status, created_at, delivered_at)
           SELECT $1, format('{"id":%s,"name":"old"}', n), 'delivered',
                  now() - interval '2 hours' - (n / 7) * interval '1 second', now()
           FROM generate_series(1, $2) AS n`,
          [subscriptionId, expired],
        );
        await sleep(SEVERAL_SWEEPS_MS);
        expect(await deliveries()).toHaveLength(expired);
        expect(await metric(api.app, REMOVED)).toBe(0);
        expect(await metric(second, REMOVED)).toBe(0);

        // The first process stops and the lock is released: the second sweeps, alone.
        apps.splice(apps.indexOf(api), 1);
        await api.app.close();
        await owner.query('SELECT pg_advisory_unlock($1)', [RETENTION_SWEEP_LOCK_KEY]);
        await until(async () => (await deliveries()).length === 0);
        expect(await metric(second, REMOVED)).toBe(expired);
      } finally {
        await second.close();
        await owner.end();
        await api.database.drop();
      }
    });
  });
});
