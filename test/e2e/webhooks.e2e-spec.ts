import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { expectError, nextPageUrl, plantsClient } from '../support/plants-client.js';
import { startService } from '../support/built-service.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { verifySignature, WebhookReceiver } from '../support/webhook-receiver.js';
import { webhooksClient } from '../support/webhooks-client.js';

/** Retries within milliseconds, so that a day's back-off plays out in a second or two. */
const FAST_DELIVERY = {
  WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
  WEBHOOK_POLL_INTERVAL_MS: '20',
  WEBHOOK_RETRY_BASE_MS: '50',
  WEBHOOK_MAX_ATTEMPTS: '5',
  WEBHOOK_TIMEOUT_MS: '1000',
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Subscription {
  id: string;
  url: string;
  secret: string;
  lastStatus: number | null;
  lastError: string | null;
  failuresInARow: number;
}

describe('webhooks', () => {
  let api: TestApp;
  let plants: ReturnType<typeof plantsClient>;
  let webhooks: ReturnType<typeof webhooksClient>;
  const receivers: WebhookReceiver[] = [];
  let nextId = 1;

  const receiver = async () => {
    const started = await WebhookReceiver.start();
    receivers.push(started);
    return started;
  };
  /**
   * Attempts made again after one that got no complete answer in time (at-least-once): the
   * receiver may have had the first, so a message id may arrive that many times more, and
   * no more. On a machine that keeps up it is 0, and nothing arrives twice.
   */
  const retriedAttempts = async (subscriptionIds: string[]) =>
    (
      await api.database.query<{ retried: number }>(
        `SELECT coalesce(sum(attempts - 1), 0)::integer AS retried FROM webhook_deliveries
          WHERE subscription_id IN ('${subscriptionIds.join("', '")}')`,
      )
    )[0].retried;
  const subscribe = async (url: string): Promise<Subscription> => {
    const response = await webhooks.subscribe({ url });
    expect(response.statusCode).toBe(201);
    return response.json();
  };
  const subscription = async (id: string): Promise<Subscription> => (await webhooks.get(id)).json();
  /** A subscribed receiver that takes every delivery and never answers. */
  const hangingSubscriber = async () => {
    const target = await receiver();
    target.answer = () => 'hang';
    await subscribe(target.url);
    return target;
  };
  /** Creates `count` new plants at once, each answered 200. */
  const createPlants = async (count: number, name: string) => {
    const ids = Array.from({ length: count }, () => nextId++);
    const answers = await Promise.all(ids.map((id) => plants.create({ id, name })));
    expect(answers.map(({ statusCode }) => statusCode)).toEqual(ids.map(() => 200));
  };
  const until = async (condition: () => Promise<boolean>, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error('timed out');
      await sleep(20);
    }
  };

  beforeAll(async () => {
    api = await createTestApp(FAST_DELIVERY);
    plants = plantsClient(api, await api.issueToken());
    webhooks = webhooksClient(api, await api.issueToken({ scopes: ['webhooks:manage'] }));
  });
  afterEach(async () => {
    for (const { id } of (await webhooks.list()).json<Subscription[]>()) await webhooks.delete(id);
    for (const each of receivers.splice(0)) await each.stop();
  });
  afterAll(() => api.close());

  describe('subscriptions', () => {
    it('POST /webhooks answers 201 with the id and the signing secret, shown this once', async () => {
      const response = await webhooks.subscribe({
        url: 'http://127.0.0.1:9/plant/webhook',
        description: 'the shop floor',
      });
      expect(response.statusCode).toBe(201);
      const created = response.json<Subscription & Record<string, unknown>>();
      expect(created).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        url: 'http://127.0.0.1:9/plant/webhook',
        description: 'the shop floor',
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        lastAttemptAt: null,
        lastStatus: null,
        lastError: null,
        failuresInARow: 0,
        failingSince: null,
        enabled: true,
        disabledAt: null,
      });
      const { secret, ...shown } = created;
      expect(secret).toBeDefined();
      expect((await webhooks.get(created.id)).json()).toEqual(shown);
      expect((await webhooks.list()).json()).toEqual([shown]);
    });

    it('GET /webhooks lists subscriptions oldest first, a page at a time, each once', async () => {
      const created: string[] = [];
      for (let index = 0; index < 5; index++) {
        created.push((await subscribe(`http://127.0.0.1:9/${index}`)).id);
      }
      const listed: string[] = [];
      for (let url: string | undefined = '/webhooks?limit=2'; url !== undefined;) {
        const page = await webhooks.send('GET', url);
        expect(page.statusCode).toBe(200);
        listed.push(...page.json<Subscription[]>().map(({ id }) => id));
        url = nextPageUrl(page);
      }
      expect(listed).toEqual(created);
      expectError(await webhooks.send('GET', '/webhooks?cursor=Nw'), 400, /^cursor /);
    });

    it('GET /webhooks without limit or cursor answers every subscription, as release 1.0.0 did', async () => {
      const existing = (await webhooks.list()).json<Subscription[]>().map(({ id }) => id);
      const created: string[] = [];
      for (let index = 0; index < 25; index++) {
        created.push((await subscribe(`http://127.0.0.1:9/all/${index}`)).id);
      }
      const whole = await webhooks.send('GET', '/webhooks');
      expect(whole.headers.link).toBeUndefined();
      expect(whole.json<Subscription[]>().map(({ id }) => id)).toEqual([...existing, ...created]);
      const paged = await webhooks.send('GET', '/webhooks?limit=3');
      expect(paged.json<Subscription[]>()).toHaveLength(3);
      const next = nextPageUrl(paged)!;
      expect(next).toMatch(/^\/webhooks\?limit=3&cursor=/);
      // A cursor alone pages too, 20 at a time.
      const cursorOnly = await webhooks.send('GET', next.replace('limit=3&', ''));
      expect(cursorOnly.json<Subscription[]>()).toHaveLength(20);
      expect(nextPageUrl(cursorOnly)).toMatch(/^\/webhooks\?cursor=/);
    });

    it('DELETE /webhooks/{id} answers 204, then 404', async () => {
      const { id } = await subscribe('http://127.0.0.1:9/');
      expect((await webhooks.delete(id)).statusCode).toBe(204);
      expectError(await webhooks.get(id), 404, /no webhook with id/);
      expectError(await webhooks.delete(id), 404, /no webhook with id/);
      expectError(await webhooks.redeliver(id), 404, /no webhook with id/);
      expectError(await webhooks.enable(id), 404, /no webhook with id/);
    });

    it('answers 400 "id must be a UUID" at every operation on one subscription', async () => {
      for (const response of [
        await webhooks.get('42'),
        await webhooks.delete('not-a-uuid'),
        await webhooks.redeliver('5b0e2c1e8f0a4d559a430f7a3c2b9e61'),
        await webhooks.enable('42'),
        await webhooks.rotateSecret('42'),
      ]) {
        expectError(response, 400, /^id must be a UUID$/);
      }
    });

    it.each([
      ['http://127.0.0.2/plant/webhook', /loopback/],
      ['http://[::1]:8080/', /loopback/],
      ['http://[::ffff:127.0.0.2]/', /loopback/],
      ['http://[::127.0.0.2]/', /loopback/],
      ['http://[::169.254.169.254]/latest/meta-data', /linkLocal/],
      ['http://[::ffff:169.254.169.254]/latest/meta-data', /linkLocal/],
      ['http://[::10.0.0.1]/', /private/],
      ['http://[::ffff:10.0.0.1]/', /private/],
      ['http://10.1.2.3/', /private/],
      ['http://192.168.0.1/hook', /private/],
      ['http://[fd00::1]/', /uniqueLocal/],
      ['http://169.254.169.254/latest/meta-data/', /linkLocal/],
      ['http://100.100.100.200/', /carrierGradeNat/],
      ['http://0.0.0.0/', /unspecified/],
    ])('refuses %s, which is no public address, with 400', async (url, range) => {
      const response = await webhooks.subscribe({ url });
      expectError(response, 400, range);
      expect(response.json<{ message: string }>().message).toMatch(/WEBHOOK_ALLOWED_HOSTS/);
    });

    it.each([
      [{ url: 'ftp://example.com/' }, /http or https/],
      [{ url: 'not a url' }, /not a valid absolute URL/],
      [{ url: 'https://user:pass@example.com/' }, /user name or password/],
      [{ url: 'http://8.8.8.8:0/hook' }, /port 0/],
      [{ url: '' }, /url must be 1 to 2048 characters/],
      [{ url: `https://example.com/a${' '.repeat(1000)}b` }, /at most 2048 characters/],
      [{}, /url must be a string/],
      [{ url: 'https://example.com/', description: 'x'.repeat(256) }, /description must be/],
    ])('refuses %j with 400', async (body, message) => {
      expectError(await webhooks.subscribe(body), 400, message);
    });

    it('needs webhooks:manage: a plants token may not manage webhooks', async () => {
      const { id } = await subscribe('http://127.0.0.1:9/');
      const withPlantScopes = webhooksClient(api, await api.issueToken());
      for (const response of [
        await withPlantScopes.subscribe({ url: 'http://127.0.0.1:9/' }),
        await withPlantScopes.list(),
        await withPlantScopes.get(id),
        await withPlantScopes.delete(id),
        await withPlantScopes.redeliver(id),
        await withPlantScopes.enable(id),
      ]) {
        expectError(response, 403, /lacks the scope webhooks:manage/);
      }
      expectError(await webhooksClient(api, undefined).list(), 401, /bearer token is required/);
      const webhooksOnly = plantsClient(api, await api.issueToken({ scopes: ['webhooks:manage'] }));
      expectError(await webhooksOnly.create({ id: 1, name: 'x' }), 403, /plants:write/);
    });
  });

  describe('delivery', () => {
    it('sends a new plant once to the subscription, signed, its id exact', async () => {
      const target = await receiver();
      const { secret } = await subscribe(target.url);
      const create = await plants.create(
        '{"id":9223372036854775807,"name":"Monstera","tag":"tropical"}',
      );
      expect(create.statusCode).toBe(200);
      const [delivery] = await target.waitFor(1);
      expect(delivery.body).toBe('{"id":9223372036854775807,"name":"Monstera","tag":"tropical"}');
      expect(delivery.headers['content-type']).toBe('application/json');
      expect(() => verifySignature(secret, delivery)).not.toThrow();
      expect(() => verifySignature(`whsec_${'A'.repeat(43)}=`, delivery)).toThrow();
      await sleep(300);
      expect(target.received).toHaveLength(1);
    });

    it('writes the NewPlant without tag when the plant has none, and escapes what JSON must', async () => {
      const target = await receiver();
      await subscribe(target.url);
      const name = 'Fern "quoted" \\ back\nline 🌿';
      expect((await plants.create({ id: nextId, name })).statusCode).toBe(200);
      const [delivery] = await target.waitFor(1);
      expect(JSON.parse(delivery.body)).toEqual({ id: nextId++, name });
    });

    it('delivers nothing for a replay or a conflict', async () => {
      const target = await receiver();
      await subscribe(target.url);
      const id = nextId++;
      expect((await plants.create({ id, name: 'Aloe' })).statusCode).toBe(200);
      await target.waitFor(1);
      expect((await plants.create({ id, name: 'Aloe' })).statusCode).toBe(200);
      expect((await plants.create({ id, name: 'Cactus' })).statusCode).toBe(409);
      await sleep(300);
      expect(target.received).toHaveLength(1);
    });

    it('delivers to a receiver that was down for a while, once it is back', async () => {
      const target = await receiver();
      const { id: subscriptionId, secret } = await subscribe(target.url);
      await target.stop();
      expect((await plants.create({ id: nextId++, name: 'Patient' })).statusCode).toBe(200);
      await until(async () => (await subscription(subscriptionId)).failuresInARow >= 2);
      expect(await subscription(subscriptionId)).toMatchObject({
        lastStatus: null,
        lastError: expect.stringMatching(/ECONNREFUSED/),
      });
      await target.restart();
      const [delivery] = await target.waitFor(1);
      expect(() => verifySignature(secret, delivery)).not.toThrow();
      await until(async () => (await subscription(subscriptionId)).failuresInARow === 0);
      expect(await subscription(subscriptionId)).toMatchObject({
        lastStatus: 200,
        lastError: null,
      });
    });

    it('fails a delivery after its last attempt; redeliver sends it again, same webhook-id', async () => {
      const target = await receiver();
      target.answer = () => 500;
      const { id: subscriptionId, secret } = await subscribe(target.url);
      expect((await plants.create({ id: nextId++, name: 'Unlucky' })).statusCode).toBe(200);
      await target.waitFor(5);
      await until(async () => (await subscription(subscriptionId)).failuresInARow === 5);
      expect(await subscription(subscriptionId)).toMatchObject({ lastStatus: 500 });
      const [{ status }] = await api.database.query<{ status: string }>(
        'SELECT status FROM webhook_deliveries',
      );
      expect(status).toBe('failed');
      await sleep(200);
      expect(target.received).toHaveLength(5);

      target.answer = () => 204;
      const redeliver = await webhooks.redeliver(subscriptionId);
      expect(redeliver.statusCode).toBe(202);
      expect(redeliver.json()).toEqual({ redelivered: 1 });
      const deliveries = await target.waitFor(6);
      expect(new Set(deliveries.map(({ headers }) => headers['webhook-id'])).size).toBe(1);
      expect(() => verifySignature(secret, deliveries[5])).not.toThrow();
      expect((await webhooks.redeliver(subscriptionId)).json()).toEqual({ redelivered: 0 });
    });

    it('never follows a redirect: a 3xx is a failed attempt', async () => {
      const target = await receiver();
      target.answer = ({ headers }) => (headers['webhook-id'] ? 302 : 200);
      const { id: subscriptionId } = await subscribe(target.url);
      expect((await plants.create({ id: nextId++, name: 'Redirected' })).statusCode).toBe(200);
      await until(async () => (await subscription(subscriptionId)).failuresInARow >= 1);
      expect(await subscription(subscriptionId)).toMatchObject({ lastStatus: 302 });
      expect(target.received.every(({ headers }) => headers['webhook-id'])).toBe(true);
    });

    it('a receiver that never answers slows neither creates nor readiness', async () => {
      const target = await hangingSubscriber();
      for (let index = 0; index < 20; index++) {
        expect((await plants.create({ id: nextId++, name: 'Busy' })).statusCode).toBe(200);
      }
      await target.waitFor(1);
      expect((await api.request({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200);
    });

    it('a backlog behind a receiver that never answers stays one event row per plant', async () => {
      const target = await hangingSubscriber();
      await createPlants(200, 'Queued');
      // The subscription's 16 attempts at once (WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION) hang
      // (WEBHOOK_TIMEOUT_MS is 1 s): once they are in flight the worker fans out no more
      // (before, while the creates came in, a claim's worth at a time).
      await target.waitFor(16);
      await sleep(100);
      const [{ deliveries, events }] = await api.database.query<{
        deliveries: number;
        events: number;
      }>(`SELECT (SELECT count(*) FROM webhook_deliveries)::integer AS deliveries,
                 (SELECT count(*) FROM webhook_events)::integer AS events`);
      expect(target.received).toHaveLength(16);
      expect(deliveries + events).toBe(200);
      expect(deliveries).toBeLessThanOrEqual(64);
    });

    it('a subscription gets the plants created from its registration on, not a backlog before it', async () => {
      await hangingSubscriber();
      await createPlants(100, 'Before');
      const late = await receiver();
      await subscribe(late.url);
      const after = nextId++;
      expect((await plants.create({ id: after, name: 'After' })).statusCode).toBe(200);
      const [delivery] = await late.waitFor(1);
      expect(JSON.parse(delivery.body)).toEqual({ id: after, name: 'After' });
      await sleep(300);
      expect(late.received).toHaveLength(1);
    });

    it('counts deliveries sent, retried and failed, and the age of the queue, in /metrics', async () => {
      const metrics = (await api.request({ method: 'GET', url: '/metrics' })).body;
      const value = (name: string) =>
        Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1]);
      expect(value('webhook_deliveries_sent_total')).toBeGreaterThan(0);
      expect(value('webhook_deliveries_retried_total')).toBeGreaterThan(0);
      expect(value('webhook_deliveries_failed_total')).toBe(1);
      expect(value('webhook_queue_age_seconds')).toBeGreaterThanOrEqual(0);
    });

    it('a second replica (the built service) draining the same outbox sends nothing twice unless an attempt timed out', async () => {
      const { service: replica } = await startService({
        ...FAST_DELIVERY,
        ...api.database.env,
      });
      try {
        const target = await receiver();
        const { id: subscriptionId } = await subscribe(target.url);
        const ids = Array.from({ length: 200 }, () => nextId++);
        await Promise.all(ids.map((id) => plants.create({ id, name: 'Replicated' })));
        const received = await target.waitFor(200);
        await sleep(300);
        expect(new Set(received.map(({ headers }) => headers['webhook-id'])).size).toBe(200);
        expect(received.length - 200).toBeLessThanOrEqual(await retriedAttempts([subscriptionId]));
      } finally {
        await replica.stop();
      }
    });

    it(
      '1,000 creates with two subscriptions: 2,000 deliveries, none twice unless an attempt timed out and was retried',
      { timeout: 120_000 },
      async () => {
        const targets = [await receiver(), await receiver()];
        const subscriptionIds: string[] = [];
        for (const target of targets) subscriptionIds.push((await subscribe(target.url)).id);
        const ids = Array.from({ length: 1000 }, () => nextId++);
        for (let start = 0; start < ids.length; start += 50) {
          const answers = await Promise.all(
            ids.slice(start, start + 50).map((id) => plants.create({ id, name: `Plant ${id}` })),
          );
          expect(answers.map(({ statusCode }) => statusCode)).toEqual(answers.map(() => 200));
        }
        const messageIds = new Set<string>();
        for (const target of targets) {
          const received = await target.waitFor(1000, 60_000);
          for (const { headers } of received) messageIds.add(String(headers['webhook-id']));
          const delivered = received.map(({ body }) => (JSON.parse(body) as { id: number }).id);
          expect([...new Set(delivered)].sort((a, b) => a - b)).toEqual(ids);
        }
        expect(messageIds.size).toBe(2000);
        await sleep(300);
        const repeats = targets.reduce((sum, { received }) => sum + received.length - 1000, 0);
        expect(repeats).toBeLessThanOrEqual(await retriedAttempts(subscriptionIds));
      },
    );

    it.each([
      ['[::127.0.0.2]', /::7f00:2 \(127\.0\.0\.2\), a loopback address/],
      ['127.0.0.1:0', /port 0/],
    ])(
      'checks a URL stored before the rules again at each attempt: %s is refused',
      async (hostAndPort, why) => {
        const target = await receiver();
        const { id: subscriptionId } = await subscribe(target.url);
        await api.database.query(
          `UPDATE webhook_subscriptions SET url = 'http://${hostAndPort}/plant/webhook'`,
        );
        expect((await plants.create({ id: nextId++, name: 'Refused' })).statusCode).toBe(200);
        await until(async () => (await subscription(subscriptionId)).failuresInARow >= 1);
        expect(await subscription(subscriptionId)).toMatchObject({
          lastStatus: null,
          lastError: expect.stringMatching(why),
        });
        expect(target.received).toHaveLength(0);
      },
    );
  });
});
