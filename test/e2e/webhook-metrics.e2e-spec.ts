import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plantsClient, type PlantsClient } from '../support/plants-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { webhooksClient } from '../support/webhooks-client.js';

/** The first retry waits this ±25 % (WEBHOOK_RETRY_BASE_MS, 10 s by default). */
const RETRY_BASE_MS = 500;
/** The gauges read from the database are read at most every 5 s (webhook-metrics.ts). */
const DATABASE_GAUGE_LIMIT = { timeout: 15_000, interval: 250 };

/**
 * The series the delivery objective and the subscription alerts are computed from
 * (deploy/monitoring/rules/plant-store.rules.yml), as a scrape shows them.
 */
describe('the webhook series the objectives and alerts read', () => {
  let api: TestApp;
  let plants: PlantsClient;
  let webhooks: ReturnType<typeof webhooksClient>;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    api = await createTestApp({
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
      WEBHOOK_POLL_INTERVAL_MS: '50',
      WEBHOOK_RETRY_BASE_MS: String(RETRY_BASE_MS),
    });
    plants = plantsClient(api, await api.issueToken());
    webhooks = webhooksClient(api, await api.issueToken({ scopes: ['webhooks:manage'] }));
  });
  afterAll(async () => {
    await Promise.all(receivers.map((receiver) => receiver.stop()));
    await api?.close();
  });

  const receiver = async (answer: (count: number) => number) => {
    const started = await WebhookReceiver.start();
    started.answer = () => answer(started.received.length);
    receivers.push(started);
    expect((await webhooks.subscribe({ url: started.url })).statusCode).toBe(201);
    return started;
  };
  /** Every sample of the scrape, by its series exactly as written (name and labels). */
  const scrape = async () => {
    const { body } = await api.request({ url: '/metrics', remoteAddress: '192.0.2.8' });
    return new Map(
      body
        .split('\n')
        .filter((line) => line !== '' && !line.startsWith('#'))
        .map((line) => [line.slice(0, line.lastIndexOf(' ')), Number(line.split(' ').at(-1))]),
    );
  };
  const latencySeries = async () =>
    [...(await scrape())].filter(([series]) => series.startsWith('webhook_delivery_latency'));

  it("webhook_delivery_latency_seconds: from the plant's create to the receiver's 2xx, a retry's wait included, in one series whatever the subscriptions", async () => {
    // The first attempt is refused, the retry accepted.
    const flaky = await receiver((count) => (count === 1 ? 503 : 200));
    const sent = performance.now();
    expect((await plants.create({ id: 1, name: 'Fern' })).statusCode).toBe(200);
    await flaky.waitFor(2);
    const elapsedSeconds = (performance.now() - sent) / 1000;
    await expect
      .poll(async () => (await scrape()).get('webhook_delivery_latency_seconds_count'))
      .toBe(1);
    const metrics = await scrape();
    const retried = metrics.get('webhook_delivery_latency_seconds_sum')!;
    expect(retried).toBeGreaterThanOrEqual((RETRY_BASE_MS * 0.75) / 1000);
    expect(retried).toBeLessThanOrEqual(elapsedSeconds);
    expect(metrics.get('webhook_delivery_latency_seconds_bucket{le="0.25"}')).toBe(0);
    expect(metrics.get('webhook_delivery_latency_seconds_bucket{le="+Inf"}')).toBe(1);

    // A second subscription: still one series, now counting a delivery to each.
    const steady = await receiver(() => 200);
    const second = performance.now();
    expect((await plants.create({ id: 2, name: 'Moss' })).statusCode).toBe(200);
    await steady.waitFor(1);
    await flaky.waitFor(3);
    const secondSeconds = (performance.now() - second) / 1000;
    await expect
      .poll(async () => (await scrape()).get('webhook_delivery_latency_seconds_count'))
      .toBe(3);
    const after = await scrape();
    const added = after.get('webhook_delivery_latency_seconds_sum')! - retried;
    expect(added).toBeGreaterThan(0);
    expect(added).toBeLessThanOrEqual(2 * secondSeconds);
    const series = await latencySeries();
    expect(series.every(([name]) => !name.includes('subscription'))).toBe(true);
    // A bucket per bound, its sum and count: one series each.
    expect(series.filter(([name]) => name.endsWith('_count'))).toHaveLength(1);
  });

  it('webhook_subscription_failing_seconds: how long the subscription failing longest has failed every attempt; 0 once it is delivered to', async () => {
    let down = true;
    const failing = await receiver(() => (down ? 503 : 200));
    expect((await plants.create({ id: 3, name: 'Ivy' })).statusCode).toBe(200);
    await failing.waitFor(1);
    await expect
      .poll(
        async () => (await scrape()).get('webhook_subscription_failing_seconds'),
        DATABASE_GAUGE_LIMIT,
      )
      .toBeGreaterThan(0);
    // Back up: the next plant's delivery is its first success since.
    down = false;
    expect((await plants.create({ id: 4, name: 'Sage' })).statusCode).toBe(200);
    await expect
      .poll(
        async () => (await scrape()).get('webhook_subscription_failing_seconds'),
        DATABASE_GAUGE_LIMIT,
      )
      .toBe(0);
  });
});
