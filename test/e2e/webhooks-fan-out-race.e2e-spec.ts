import { Logger } from '@nestjs/common';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { WebhooksRepository } from '../../src/webhooks/webhooks.repository.js';
import { plantsClient } from '../support/plants-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { webhooksClient } from '../support/webhooks-client.js';

/** The worker never runs by itself: the test fans out when it chooses. */
const WORKER_ASLEEP = {
  WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
  WEBHOOK_POLL_INTERVAL_MS: '60000',
  WEBHOOK_LISTEN: 'false',
};
const WORKER_AWAKE = { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_POLL_INTERVAL_MS: '20' };
const DATABASE_WAITS = /wait for the database/;

/**
 * A subscription deleted while the worker fans out events costs nothing: before, the fan-out
 * still saw it in its snapshot, its insert broke webhook_deliveries_subscription_id_fkey,
 * the worker warned "webhook deliveries wait for the database" and every subscriber's
 * deliveries waited for the next poll.
 */
describe('a subscription deleted during the fan-out', () => {
  const receivers: WebhookReceiver[] = [];
  const receiver = async () => {
    const started = await WebhookReceiver.start();
    receivers.push(started);
    return started;
  };
  afterEach(async () => {
    vi.restoreAllMocks();
    for (const each of receivers.splice(0)) await each.stop();
  });

  describe('in the fan-out statement itself', () => {
    let api: TestApp;
    beforeAll(async () => (api = await createTestApp(WORKER_ASLEEP)));
    afterAll(() => api?.close());

    it('is waited for while its DELETE is open, then left out: the others get the event', async () => {
      const webhooks = webhooksClient(api, await api.issueToken({ scopes: ['webhooks:manage'] }));
      const plants = plantsClient(api, await api.issueToken());
      const subscribe = async (url: string) =>
        (await webhooks.subscribe({ url })).json<{ id: string }>().id;
      const [staying, deleted] = [
        await subscribe('http://127.0.0.1:9/staying'),
        await subscribe('http://127.0.0.1:9/deleted'),
      ];
      expect((await plants.create({ id: 1, name: 'Raced' })).statusCode).toBe(200);

      // The DELETE the API makes, held open in a transaction of its own.
      const deleter = new pg.Client({ connectionString: api.database.url });
      await deleter.connect();
      try {
        await deleter.query('BEGIN');
        await deleter.query('DELETE FROM webhook_subscriptions WHERE id = $1', [deleted]);
        const fanOut = api.app.get(WebhooksRepository).fanOut(10, []);
        const outcome = fanOut.then(
          (events) => ({ events }),
          (error: Error) => ({ error: error.message }),
        );
        // The fan-out has its snapshot, in which the subscription is there, and waits for
        // its row: a condition, not a time.
        await expect
          .poll(
            async () =>
              (
                await api.database.query<{ waiting: number }>(
                  `SELECT count(*)::integer AS waiting FROM pg_stat_activity
                   WHERE datname = current_database() AND wait_event_type = 'Lock'
                     AND query LIKE '%INSERT INTO webhook_deliveries%'`,
                )
              )[0].waiting,
            { timeout: 10_000, interval: 20 },
          )
          .toBe(1);
        await deleter.query('COMMIT');
        expect(await outcome).toEqual({ events: 1 });
      } finally {
        await deleter.end();
      }
      expect(
        await api.database.query('SELECT subscription_id::text, payload FROM webhook_deliveries'),
      ).toEqual([{ subscription_id: staying, payload: '{"id":1,"name":"Raced"}' }]);
      expect(await api.database.query('SELECT id FROM webhook_events')).toEqual([]);
    });
  });

  describe('while creates flow', () => {
    let api: TestApp;
    beforeAll(async () => (api = await createTestApp(WORKER_AWAKE)));
    afterAll(() => api?.close());

    it(
      'subscriptions deleted in a loop: no database warning, no 5xx, every create delivered to every subscription that stayed',
      { timeout: 120_000 },
      async () => {
        const warn = vi.spyOn(Logger.prototype, 'warn');
        const webhooks = webhooksClient(api, await api.issueToken({ scopes: ['webhooks:manage'] }));
        const plants = plantsClient(api, await api.issueToken());
        const staying = [await receiver(), await receiver(), await receiver()];
        const doomed = await receiver();
        const statuses: number[] = [];
        const subscribe = async (url: string) => {
          const response = await webhooks.subscribe({ url });
          statuses.push(response.statusCode);
          return response.json<{ id: string }>().id;
        };
        for (const { url } of staying) await subscribe(url);

        const ids = Array.from({ length: 400 }, (_, index) => index + 1);
        let creating = true;
        const creates = (async () => {
          try {
            // 8 at a time: each wave's events are fanned out as the next one comes in.
            for (let start = 0; start < ids.length; start += 8) {
              const answers = await Promise.all(
                ids.slice(start, start + 8).map((id) => plants.create({ id, name: `plant ${id}` })),
              );
              statuses.push(...answers.map(({ statusCode }) => statusCode));
            }
          } finally {
            creating = false;
          }
        })();
        let deleted = 0;
        const deletes = (async () => {
          // Two subscriptions to delete at any time, one made as one is deleted.
          const queue = [await subscribe(doomed.url), await subscribe(doomed.url)];
          while (creating) {
            queue.push(await subscribe(doomed.url));
            const response = await webhooks.delete(queue.shift()!);
            statuses.push(response.statusCode);
            deleted++;
          }
          for (const id of queue) statuses.push((await webhooks.delete(id)).statusCode);
        })();
        await Promise.all([creates, deletes]);

        expect(statuses.filter((status) => status >= 500)).toEqual([]);
        expect(new Set(statuses)).toEqual(new Set([200, 201, 204]));
        expect(deleted).toBeGreaterThan(10);
        // Within a bound: a delivery lost, or waiting for a lease to run out, misses it.
        for (const target of staying) {
          const received = await target.waitFor(ids.length, 30_000);
          const delivered = received.map(({ body }) => (JSON.parse(body) as { id: number }).id);
          expect(delivered.sort((a, b) => a - b)).toEqual(ids);
        }
        const warnings = warn.mock.calls.map(([message]) => String(message));
        expect(warnings.filter((message) => DATABASE_WAITS.test(message))).toEqual([]);
      },
    );
  });
});
