import { randomBytes, randomUUID } from 'node:crypto';
import {
  type CreatedWebhook,
  createPlantStoreClient,
  InvalidWebhookError,
  type PlantStoreClient,
  type PlantStoreClientOptions,
  PlantStoreError,
  type StoredPlant,
  verifyNewPlantWebhook,
} from '@plant-store/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { type ReceivedDelivery, WebhookReceiver } from '../support/webhook-receiver.js';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Receivers on loopback allowed, and webhook retries and the failure window that disables a
 * subscription (a day and 5 days by default) shortened to about 2 s.
 */
const FAST_WEBHOOKS = {
  WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
  WEBHOOK_POLL_INTERVAL_MS: '20',
  WEBHOOK_RETRY_BASE_MS: '50',
  WEBHOOK_MAX_ATTEMPTS: '6',
  WEBHOOK_DISABLE_AFTER_FAILING_MS: '1000',
};

type Fetch = NonNullable<PlantStoreClientOptions['fetch']>;

/** The client's error for `call`, which must fail. */
async function failureOf(call: Promise<unknown>): Promise<PlantStoreError> {
  const failure = await call.then(
    () => expect.fail('the call succeeded'),
    (error: unknown) => error,
  );
  expect(failure).toBeInstanceOf(PlantStoreError);
  return failure as PlantStoreError;
}

describe('the typed client (@plant-store/client) against the running service', () => {
  let api: TestApp;
  let baseUrl: string;
  let token: string;
  let client: PlantStoreClient;
  const contractProblems: string[] = [];

  /** fetch, with every answer checked against the served document and the seed. */
  const checkedFetch: Fetch = async (request) => {
    const response = await fetch(request);
    const { pathname, search } = new URL(request.url);
    const exchange = {
      method: request.method,
      url: pathname + search,
      statusCode: response.status,
      headers: Object.fromEntries(response.headers),
      body: await response.clone().text(),
    };
    contractProblems.push(...api.contracts.flatMap((contract) => contract.problemsWith(exchange)));
    return response;
  };

  const clientWith = (options: Partial<PlantStoreClientOptions> = {}) =>
    createPlantStoreClient({ baseUrl, token, fetch: checkedFetch, ...options });

  /** The plant with this id as the database holds it, its id as exact text. */
  const stored = (id: bigint) =>
    api.database.query<{ id: string; name: string }>(
      `SELECT id::text, name FROM plants WHERE id = ${id}`,
    );

  beforeAll(async () => {
    api = await createTestApp(FAST_WEBHOOKS);
    await api.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = await api.app.getUrl();
    token = await api.issueToken();
    client = clientWith();
  });
  afterEach(() => {
    expect(contractProblems.splice(0)).toEqual([]);
  });
  afterAll(() => api.close());

  describe('ids at the int64 edges, as bigint both ways', () => {
    it.each([[INT64_MIN], [INT64_MAX]])(
      'creates, reads, replaces and deletes plant %s',
      async (id) => {
        const name = `edge ${id}`;
        expect(await client.create({ id, name, tag: 'int64' })).toEqual({ name, tag: 'int64' });
        expect(await stored(id)).toEqual([{ id: String(id), name }]);

        const read = await client.get(id);
        expect(read).toEqual({ id, name, tag: 'int64' });
        expect(typeof read.id).toBe('bigint');

        // A plant read with GET can be sent back as it is, id included.
        expect(await client.replace(id, { ...read, name: `${name} renamed` })).toEqual({
          id,
          name: `${name} renamed`,
          tag: 'int64',
        });
        expect(await client.replace(id, { name })).toEqual({ id, name });

        await client.delete(id);
        const gone = await failureOf(client.get(id));
        expect(gone.error).toBe(404);
      },
    );
  });

  describe('create', () => {
    it('answers an identical replay like the first time', async () => {
      const plant = { id: 9_007_199_254_740_993n, name: 'Replayed', tag: 'twice' };
      expect(await client.create(plant)).toEqual({ name: 'Replayed', tag: 'twice' });
      expect(await client.create(plant)).toEqual({ name: 'Replayed', tag: 'twice' });
      expect(await stored(plant.id)).toEqual([{ id: '9007199254740993', name: 'Replayed' }]);
    });

    it('throws a conflicting one as a PlantStoreError with the service’s {error, message}', async () => {
      await client.create({ id: INT64_MAX - 1n, name: 'First' });
      const conflict = await failureOf(client.create({ id: INT64_MAX - 1n, name: 'Second' }));
      expect(conflict.error).toBe(409);
      expect(conflict.response.status).toBe(409);
      expect(conflict.message).toMatch(/exists/);
    });

    it('throws a refused request as a PlantStoreError too', async () => {
      const refused = await failureOf(clientWith({ token: undefined }).get(1n));
      expect(refused).toMatchObject({ error: 401, message: expect.any(String) });
      expect(refused.response.headers.get('www-authenticate')).toMatch(/^Bearer/);
    });
  });

  describe('retries of create', () => {
    const fastRetry = { baseDelayMs: 1, maxDelayMs: 10 };

    /** A fetch that fails the first `failures` requests with `fail`, then sends them. */
    const failingFirst = (failures: number, fail: (request: Request) => Promise<Response>) => {
      const calls: string[] = [];
      const fetchWithFailures: Fetch = async (request) => {
        calls.push(request.method);
        return calls.length <= failures ? fail(request) : checkedFetch(request);
      };
      return { calls, fetch: fetchWithFailures };
    };

    it('retries when the answer is lost, and the replay settles it with one plant', async () => {
      // The service stores the plant, but its answer never reaches the client.
      const lost = failingFirst(1, async (request) => {
        await checkedFetch(request);
        throw new TypeError('fetch failed: the connection was reset');
      });
      const retrying = clientWith({ fetch: lost.fetch, createRetry: fastRetry });
      expect(await retrying.create({ id: 4242n, name: 'Lost answer' })).toEqual({
        name: 'Lost answer',
      });
      expect(lost.calls).toEqual(['POST', 'POST']);
      expect(await stored(4242n)).toEqual([{ id: '4242', name: 'Lost answer' }]);
    });

    it('retries a 503, waiting what Retry-After asks for at most maxDelayMs', async () => {
      const unavailable = failingFirst(2, async () =>
        Response.json(
          { error: 503, message: 'The database is unreachable' },
          { status: 503, headers: { 'retry-after': '30' } },
        ),
      );
      const retrying = clientWith({ fetch: unavailable.fetch, createRetry: fastRetry });
      const started = Date.now();
      expect(await retrying.create({ id: 4343n, name: 'After 503' })).toEqual({
        name: 'After 503',
      });
      expect(unavailable.calls).toHaveLength(3);
      expect(Date.now() - started).toBeLessThan(1_000);
    });

    it('gives up after the attempts it is given, with the last failure', async () => {
      const down = failingFirst(Infinity, async () => {
        throw new TypeError('fetch failed: connection refused');
      });
      const retrying = clientWith({
        fetch: down.fetch,
        createRetry: { ...fastRetry, attempts: 3 },
      });
      await expect(retrying.create({ id: 4444n, name: 'Never' })).rejects.toThrow(
        /connection refused/,
      );
      expect(down.calls).toHaveLength(3);
      expect(await stored(4444n)).toEqual([]);
    });

    it('does not retry an answer other than 503', async () => {
      const counted = failingFirst(0, async () => expect.fail('no failure'));
      const retrying = clientWith({ fetch: counted.fetch, createRetry: fastRetry });
      await retrying.create({ id: 4545n, name: 'Once' });
      const conflict = await failureOf(retrying.create({ id: 4545n, name: 'Other' }));
      expect(conflict.error).toBe(409);
      expect(counted.calls).toHaveLength(2);
    });
  });

  describe('listing', () => {
    const tag = 'paged';
    const ids = [INT64_MIN + 1n, -5n, 0n, 7n, 2n ** 53n + 3n, INT64_MAX - 2n, INT64_MAX - 3n];

    beforeAll(async () => {
      for (const id of ids) await client.create({ id, name: `paged ${id}`, tag });
    });

    it('gives a page and the cursor of the next one from the Link header', async () => {
      const first = await client.listPage({ tag, limit: 3 });
      expect(first.plants.map((plant) => plant.id)).toEqual([INT64_MIN + 1n, -5n, 0n]);
      expect(first.nextCursor).toEqual(expect.any(String));
      const last = await client.listPage({ tag, limit: 4, cursor: first.nextCursor });
      expect(last.plants).toHaveLength(4);
      expect(last.nextCursor).toBeUndefined();
    });

    it('iterates over every plant, page after page, by ascending id', async () => {
      const seen: StoredPlant[] = [];
      for await (const plant of client.plants({ tag, limit: 2 })) seen.push(plant);
      expect(seen.map((plant) => plant.id)).toEqual([...ids].sort((a, b) => (a < b ? -1 : 1)));
      expect(seen[0]).toEqual({ id: INT64_MIN + 1n, name: `paged ${INT64_MIN + 1n}`, tag });
    });

    it('iterates over nothing when no plant matches', async () => {
      const seen: StoredPlant[] = [];
      for await (const plant of client.plants({ tag: 'no such tag' })) seen.push(plant);
      expect(seen).toEqual([]);
    });

    it('throws an invalid query as a PlantStoreError', async () => {
      const refused = await failureOf(client.listPage({ limit: 1000 }));
      expect(refused.error).toBe(400);
    });
  });

  describe('webhooks', () => {
    let webhooks: PlantStoreClient['webhooks'];
    let receiver: WebhookReceiver;
    let failingReceiver: WebhookReceiver;
    let subscription: CreatedWebhook;
    let delivery: ReceivedDelivery;
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

    beforeAll(async () => {
      const manager = await api.issueToken({ scopes: ['webhooks:manage'] });
      webhooks = clientWith({ token: manager }).webhooks;
      receiver = await WebhookReceiver.start();
      failingReceiver = await WebhookReceiver.start();
      failingReceiver.answer = () => 503;
    });
    afterAll(async () => {
      for (const { id } of await webhooks.list()) await webhooks.delete(id);
      await receiver.stop();
      await failingReceiver.stop();
    });

    it('subscribes a URL, answering the signing secret this once; get and list show it without', async () => {
      subscription = await webhooks.create({ url: receiver.url, description: 'typed client' });
      expect(subscription).toMatchObject({
        id: expect.stringMatching(uuid),
        url: receiver.url,
        description: 'typed client',
        secret: expect.stringMatching(/^whsec_/),
        enabled: true,
        disabledAt: null,
      });
      const { secret: _secret, ...shown } = subscription;
      expect(await webhooks.get(subscription.id)).toEqual(shown);
      expect(await webhooks.list()).toEqual([shown]);
    });

    it('delivers plant 2^63-1, which verifyNewPlantWebhook verifies and reads with its exact bigint id', async () => {
      await client.create({ id: INT64_MAX, name: 'Monstera', tag: 'tropical' });
      [delivery] = await receiver.waitFor(1);
      expect(delivery.body).toContain('9223372036854775807');

      const verified = verifyNewPlantWebhook(subscription.secret, delivery.body, delivery.headers);
      expect(verified).toEqual({
        webhookId: delivery.headers['webhook-id'],
        plant: { id: INT64_MAX, name: 'Monstera', tag: 'tropical' },
      });
      expect(typeof verified.plant.id).toBe('bigint');
      // The body as bytes and fetch's Headers, as other servers hand them over, verify alike.
      const bytes = new TextEncoder().encode(delivery.body);
      const headers = new Headers(delivery.headers as Record<string, string>);
      expect(verifyNewPlantWebhook(subscription.secret, bytes, headers)).toEqual(verified);
    });

    it('refuses a tampered body, another secret and a delivery without its signature', () => {
      const verifying =
        (secret: string, body: string, headers: ReceivedDelivery['headers']) => () =>
          verifyNewPlantWebhook(secret, body, headers);
      const tampered = delivery.body.replace('9223372036854775807', '9223372036854775806');
      expect(verifying(subscription.secret, tampered, delivery.headers)).toThrow(
        InvalidWebhookError,
      );
      expect(verifying(subscription.secret, tampered, delivery.headers)).toThrow(
        /does not verify: No matching signature found/,
      );
      const otherSecret = `whsec_${randomBytes(32).toString('base64')}`;
      expect(verifying(otherSecret, delivery.body, delivery.headers)).toThrow(InvalidWebhookError);
      const { 'webhook-signature': _signature, ...unsigned } = delivery.headers;
      expect(verifying(subscription.secret, delivery.body, unsigned)).toThrow(
        /does not verify: Missing required headers/,
      );
    });

    it('enables a subscription disabled for failing, and redelivers what it gave up, with the same webhook-id', async () => {
      const { id, secret } = await webhooks.create({ url: failingReceiver.url });
      await client.create({ id: 1n, name: 'Given up' });
      await expect
        .poll(async () => (await webhooks.get(id)).enabled, { timeout: 10_000 })
        .toBe(false);
      expect(await webhooks.get(id)).toMatchObject({
        lastStatus: 503,
        disabledAt: expect.any(String),
      });

      failingReceiver.answer = () => 204;
      expect(await webhooks.enable(id)).toMatchObject({
        id,
        enabled: true,
        disabledAt: null,
        failingSince: null,
      });
      const attempts = failingReceiver.received.length;
      expect(await webhooks.redeliver(id)).toEqual({ redelivered: 1 });
      const redelivered = (await failingReceiver.waitFor(attempts + 1))[attempts];
      expect(verifyNewPlantWebhook(secret, redelivered.body, redelivered.headers)).toEqual({
        webhookId: failingReceiver.received[0].headers['webhook-id'],
        plant: { id: 1n, name: 'Given up' },
      });
    });

    it('rotates a secret, answered this once; a receiver given several secrets verifies a delivery signed with any of them', async () => {
      const rotated = await webhooks.rotateSecret(subscription.id, { overlapSeconds: 600 });
      expect(rotated).toMatchObject({
        id: subscription.id,
        secret: expect.stringMatching(/^whsec_/),
        previousSecretExpiresAt: expect.any(String),
      });
      expect(rotated.secret).not.toBe(subscription.secret);
      const arrived = receiver.received.length;
      await client.create({ id: 2n, name: 'Rotated' });
      const { body, headers } = (await receiver.waitFor(arrived + 1))[arrived];
      const otherSecret = `whsec_${randomBytes(32).toString('base64')}`;
      for (const secrets of [
        subscription.secret,
        rotated.secret,
        [otherSecret, subscription.secret],
        [otherSecret, rotated.secret],
      ]) {
        expect(verifyNewPlantWebhook(secrets, body, headers).plant).toEqual({
          id: 2n,
          name: 'Rotated',
        });
      }
      expect(() => verifyNewPlantWebhook([otherSecret], body, headers)).toThrow(
        /does not verify: No matching signature found/,
      );
      expect((await failureOf(webhooks.rotateSecret(randomUUID()))).error).toBe(404);
      subscription = { ...subscription, secret: rotated.secret };
    });

    it('deletes a subscription: reading or deleting it again throws a 404 PlantStoreError', async () => {
      expect(await webhooks.redeliver(subscription.id)).toEqual({ redelivered: 0 });
      await webhooks.delete(subscription.id);
      expect((await failureOf(webhooks.get(subscription.id))).error).toBe(404);
      expect((await failureOf(webhooks.delete(subscription.id))).error).toBe(404);
      expect((await webhooks.list()).map(({ id }) => id)).not.toContain(subscription.id);
    });

    it('throws a token without webhooks:manage as a 403 PlantStoreError', async () => {
      expect((await failureOf(client.webhooks.list())).error).toBe(403);
    });
  });
});
