import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectError, plantsClient } from '../support/plants-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import {
  type ReceivedDelivery,
  verifySignature,
  WebhookReceiver,
} from '../support/webhook-receiver.js';
import { webhooksClient } from '../support/webhooks-client.js';

const FAST_DELIVERY = {
  WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
  WEBHOOK_POLL_INTERVAL_MS: '20',
  WEBHOOK_RETRY_BASE_MS: '50',
};
/** Long enough for a few deliveries on a loaded machine, short enough to wait out. */
const OVERLAP_SECONDS = 3;
const DAY_MS = 86_400_000;
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Rotated {
  id: string;
  secret: string;
  previousSecretExpiresAt: string | null;
}

/** Whether a receiver holding only `secret` accepts the delivery. */
const verifies = (secret: string, delivery: ReceivedDelivery) => {
  try {
    verifySignature(secret, delivery);
    return true;
  } catch {
    return false;
  }
};

describe('rotating a webhook secret', () => {
  let api: TestApp;
  let plants: ReturnType<typeof plantsClient>;
  let webhooks: ReturnType<typeof webhooksClient>;
  let receiver: WebhookReceiver;
  let nextId = 1;

  const subscribe = async () => {
    const response = await webhooks.subscribe({ url: receiver.url });
    expect(response.statusCode).toBe(201);
    return response.json<{ id: string; secret: string }>();
  };
  /** Creates `count` plants and answers their deliveries, once all have arrived. */
  const deliveriesOf = async (count: number) => {
    const ids = Array.from({ length: count }, () => nextId++);
    for (const id of ids)
      expect((await plants.create({ id, name: `plant ${id}` })).statusCode).toBe(200);
    const wanted = new Set(ids);
    const deadline = Date.now() + 20_000;
    const arrived = () =>
      receiver.received.filter(({ body }) => wanted.has((JSON.parse(body) as { id: number }).id));
    while (arrived().length < count) {
      if (Date.now() > deadline) throw new Error(`${arrived().length} of ${count} arrived`);
      await sleep(20);
    }
    return arrived();
  };

  beforeAll(async () => {
    api = await createTestApp(FAST_DELIVERY);
    plants = plantsClient(api, await api.issueToken());
    webhooks = webhooksClient(api, await api.issueToken({ scopes: ['webhooks:manage'] }));
  });
  beforeEach(async () => {
    receiver = await WebhookReceiver.start();
  });
  afterEach(async () => {
    for (const { id } of (await webhooks.list()).json<{ id: string }[]>())
      await webhooks.delete(id);
    await receiver.stop();
  });
  afterAll(() => api.close());

  it('signs every delivery of the overlap with both secrets, each verifying alone; after it, only with the new one', async () => {
    const { id, secret: oldSecret } = await subscribe();
    const rotation = await webhooks.rotateSecret(id, { overlapSeconds: OVERLAP_SECONDS });
    expect(rotation.statusCode).toBe(200);
    const rotated = rotation.json<Rotated>();
    expect(rotated).toMatchObject({ id, secret: expect.stringMatching(SECRET) });
    const newSecret = rotated.secret;
    expect(newSecret).not.toBe(oldSecret);
    const expiresAt = Date.parse(rotated.previousSecretExpiresAt!);
    expect(expiresAt - Date.now()).toBeGreaterThan(0);
    expect(expiresAt - Date.now()).toBeLessThanOrEqual(OVERLAP_SECONDS * 1_000);

    const during = await deliveriesOf(5);
    // Arrived within the overlap: otherwise this part would prove nothing.
    expect(Date.now()).toBeLessThan(expiresAt);
    for (const delivery of during) {
      expect(String(delivery.headers['webhook-signature']).split(' ')).toHaveLength(2);
      expect(verifies(oldSecret, delivery)).toBe(true);
      expect(verifies(newSecret, delivery)).toBe(true);
    }

    await sleep(expiresAt - Date.now() + 200);
    const after = await deliveriesOf(5);
    for (const delivery of after) {
      expect(String(delivery.headers['webhook-signature']).split(' ')).toHaveLength(1);
      expect(verifies(oldSecret, delivery)).toBe(false);
      expect(verifies(newSecret, delivery)).toBe(true);
    }
  });

  it('overlaps a day when the body is left out, and not at all with 0', async () => {
    const { id, secret: first } = await subscribe();
    const byDefault = (await webhooks.rotateSecret(id)).json<Rotated>();
    const overlapMs = Date.parse(byDefault.previousSecretExpiresAt!) - Date.now();
    expect(overlapMs).toBeGreaterThan(DAY_MS - 60_000);
    expect(overlapMs).toBeLessThanOrEqual(DAY_MS);

    const now = await webhooks.rotateSecret(id, { overlapSeconds: 0 });
    expect(now.statusCode).toBe(200);
    const { secret: third, previousSecretExpiresAt } = now.json<Rotated>();
    expect(previousSecretExpiresAt).toBeNull();
    const [delivery] = await deliveriesOf(1);
    expect(verifies(third, delivery)).toBe(true);
    expect(verifies(byDefault.secret, delivery)).toBe(false);
    expect(verifies(first, delivery)).toBe(false);
  });

  it('never shows the secret again: reading the subscription answers it without', async () => {
    const { id } = await subscribe();
    await webhooks.rotateSecret(id, {});
    const read = (await webhooks.get(id)).json<Record<string, unknown>>();
    expect(read).not.toHaveProperty('secret');
    expect(read).not.toHaveProperty('previousSecretExpiresAt');
  });

  it('answers 404 for an unknown subscription and 400 for an id that is not a UUID', async () => {
    expectError(
      await webhooks.rotateSecret('00000000-0000-4000-8000-000000000000'),
      404,
      /no webhook with id/,
    );
    expectError(await webhooks.rotateSecret('42'), 400, /^id must be a UUID$/);
  });

  it.each([
    [{ overlapSeconds: -1 }],
    [{ overlapSeconds: 604_801 }],
    [{ overlapSeconds: 1.5 }],
    [{ overlapSeconds: '60' }],
    [{ overlapSeconds: null }],
  ])('answers 400 for %j, and rotates nothing', async (body) => {
    const { id, secret } = await subscribe();
    expectError(
      await webhooks.rotateSecret(id, body),
      400,
      /overlapSeconds must be an integer from 0 to 604800/,
    );
    const [delivery] = await deliveriesOf(1);
    expect(verifies(secret, delivery)).toBe(true);
    expect(String(delivery.headers['webhook-signature']).split(' ')).toHaveLength(1);
  });

  it('answers 400 for a body that is not a JSON object', async () => {
    const { id } = await subscribe();
    expectError(await webhooks.rotateSecret(id, '[]'), 400, /JSON object/);
  });

  it('needs the scope webhooks:manage', async () => {
    const { id } = await subscribe();
    const response = await plantsClient(api, await api.issueToken()).send(
      'POST',
      `/webhooks/${id}/rotate-secret`,
    );
    expect(response.statusCode).toBe(403);
  });
});
