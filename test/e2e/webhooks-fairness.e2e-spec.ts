import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plantsClient } from '../support/plants-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { deliveryLatencies, WebhookReceiver } from '../support/webhook-receiver.js';
import { percentile } from '../support/percentile.js';
import { webhooksClient } from '../support/webhooks-client.js';

const CREATES = 500;
/**
 * 25 creates at once, a wave every 200 ms: 125 a second. The test's one thread also
 * creates, sends and receives every delivery; unpaced, on two loaded cores, the bound
 * would measure that thread's backlog rather than the hanging receiver's effect.
 */
const CONCURRENT_CREATES = 25;
const WAVE_INTERVAL_MS = 200;
/** The default WEBHOOK_TIMEOUT_MS: a receiver that never answers holds each attempt this long. */
const ATTEMPT_TIMEOUT_MS = 5_000;
const MAX_IN_FLIGHT_PER_SUBSCRIPTION = 16;

/**
 * Before WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION, one receiver that never answered held all
 * 64 attempt slots of a process until each attempt timed out, and a healthy receiver's
 * deliveries waited a median 11.6 s. The worker polls every 50 ms here (1 s by default):
 * the bound measures the queue, not the poll.
 */
describe('fair webhook delivery: a receiver that never answers delays only itself', () => {
  let api: TestApp;
  let hanging: WebhookReceiver;
  let healthy: WebhookReceiver;

  beforeAll(async () => {
    api = await createTestApp({
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
      WEBHOOK_POLL_INTERVAL_MS: '50',
      WEBHOOK_TIMEOUT_MS: String(ATTEMPT_TIMEOUT_MS),
      WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION: String(MAX_IN_FLIGHT_PER_SUBSCRIPTION),
    });
    hanging = await WebhookReceiver.start();
    hanging.answer = () => 'hang';
    healthy = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await hanging?.stop();
    await healthy?.stop();
    await api?.close();
  });

  it(`${CREATES} creates: the healthy receiver gets every one, p99 under 1 s from the create's 200`, async () => {
    const webhooks = webhooksClient(api, await api.issueToken({ scopes: ['webhooks:manage'] }));
    for (const { url } of [hanging, healthy]) {
      expect((await webhooks.subscribe({ url })).statusCode).toBe(201);
    }
    const plants = plantsClient(api, await api.issueToken());
    const answeredAt = new Map<number, number>();
    const startedAt = performance.now();
    for (let first = 1; first <= CREATES; first += CONCURRENT_CREATES) {
      const wave = sleep(WAVE_INTERVAL_MS);
      const ids = Array.from({ length: CONCURRENT_CREATES }, (_, index) => first + index);
      await Promise.all(
        ids.map(async (id) => {
          const { statusCode } = await plants.create({ id, name: `plant ${id}` });
          expect(statusCode).toBe(200);
          answeredAt.set(id, performance.now());
        }),
      );
      await wave;
    }

    const received = await healthy.waitFor(CREATES, 30_000);
    const latencies = deliveryLatencies(received, answeredAt);
    const delivered = received.map(({ body }) => (JSON.parse(body) as { id: number }).id);
    expect(new Set(delivered).size).toBe(CREATES);
    expect(percentile(latencies, 0.99)).toBeLessThan(1_000);

    // The receiver that never answers was tried, with at most its share at once: before
    // its first attempts time out, no more than the cap arrived.
    expect(hanging.received.length).toBeGreaterThan(0);
    const beforeFirstTimeout = hanging.received.filter(
      ({ receivedAt }) => receivedAt < startedAt + ATTEMPT_TIMEOUT_MS,
    );
    expect(beforeFirstTimeout.length).toBeLessThanOrEqual(MAX_IN_FLIGHT_PER_SUBSCRIPTION);
  });
});
