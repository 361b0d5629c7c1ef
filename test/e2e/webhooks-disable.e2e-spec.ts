import { setTimeout as sleep } from 'node:timers/promises';
import { Logger } from '@nestjs/common';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { plantsClient } from '../support/plants-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { webhooksClient } from '../support/webhooks-client.js';

/** WEBHOOK_DISABLE_AFTER_FAILING_MS, 5 days by default, shortened so the test sees it. */
const DISABLE_AFTER_MS = 1_000;

interface Subscription {
  id: string;
  failuresInARow: number;
  failingSince: string | null;
  enabled: boolean;
  disabledAt: string | null;
}

describe('a webhook subscription that keeps failing is disabled, and can be enabled again', () => {
  let api: TestApp;
  let plants: ReturnType<typeof plantsClient>;
  let webhooks: ReturnType<typeof webhooksClient>;
  let failing: WebhookReceiver;
  let healthy: WebhookReceiver;
  let nextId = 1;

  beforeAll(async () => {
    api = await createTestApp({
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
      WEBHOOK_POLL_INTERVAL_MS: '20',
      WEBHOOK_RETRY_BASE_MS: '50',
      WEBHOOK_MAX_ATTEMPTS: '30',
      WEBHOOK_DISABLE_AFTER_FAILING_MS: String(DISABLE_AFTER_MS),
    });
    plants = plantsClient(api, await api.issueToken());
    webhooks = webhooksClient(api, await api.issueToken({ scopes: ['webhooks:manage'] }));
    failing = await WebhookReceiver.start();
    failing.answer = () => 503;
    healthy = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await failing?.stop();
    await healthy?.stop();
    await api?.close();
  });

  const subscription = async (id: string) => (await webhooks.get(id)).json<Subscription>();
  const create = async () => {
    const id = nextId++;
    expect((await plants.create({ id, name: `plant ${id}` })).statusCode).toBe(200);
    return id;
  };
  const metric = async (name: string) => {
    const { body } = await api.request({ url: '/metrics', remoteAddress: '192.0.2.7' });
    return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(body)?.[1]);
  };

  it(`disables it once every attempt failed for WEBHOOK_DISABLE_AFTER_FAILING_MS, fails its pending deliveries, sends it nothing more, and leaves others alone`, async () => {
    const warn = vi.spyOn(Logger.prototype, 'warn');
    const { id } = (await webhooks.subscribe({ url: failing.url })).json<Subscription>();
    expect((await webhooks.subscribe({ url: healthy.url })).statusCode).toBe(201);

    const failingFrom = Date.now();
    await create();
    await failing.waitFor(1);
    // The receiver has it before the outcome is recorded.
    await expect
      .poll(() => subscription(id))
      .toMatchObject({
        failingSince: expect.stringMatching(/^\d{4}-/),
        enabled: true,
        disabledAt: null,
      });
    // New plants keep coming, and failing, until the window has passed.
    while ((await subscription(id)).enabled) {
      expect(Date.now() - failingFrom).toBeLessThan(DISABLE_AFTER_MS + 5_000);
      await create();
      await sleep(100);
    }
    const disabled = await subscription(id);
    expect(disabled).toMatchObject({
      enabled: false,
      disabledAt: expect.stringMatching(/^\d{4}-/),
    });
    expect(
      Date.parse(disabled.disabledAt!) - Date.parse(disabled.failingSince!),
    ).toBeGreaterThanOrEqual(DISABLE_AFTER_MS);
    const [{ pending }] = await api.database.query<{ pending: number }>(
      `SELECT count(*)::integer AS pending FROM webhook_deliveries
       WHERE subscription_id = '${id}' AND status = 'pending'`,
    );
    expect(pending).toBe(0);
    expect(await metric('webhook_subscriptions_disabled')).toBe(1);
    expect(
      warn.mock.calls.some(([message]) => String(message).startsWith(`webhook ${id} disabled`)),
    ).toBe(true);
    warn.mockRestore();

    // Disabled: a new plant reaches the healthy receiver, not this one.
    const attemptsSoFar = failing.received.length;
    const after = await create();
    await expect
      .poll(() => healthy.received.some(({ body }) => JSON.parse(body).id === after))
      .toBe(true);
    await sleep(300);
    expect(failing.received).toHaveLength(attemptsSoFar);
  });

  it('POST /webhooks/{id}/enable sends it new plants again, from a fresh window; redeliver sends what was given up', async () => {
    const [{ id }] = (await webhooks.list())
      .json<Subscription[]>()
      .filter(({ enabled }) => !enabled);
    failing.answer = () => 204;
    const enabled = await webhooks.enable(id);
    expect(enabled.statusCode).toBe(200);
    expect(enabled.json()).toMatchObject({
      id,
      enabled: true,
      disabledAt: null,
      failingSince: null,
    });
    expect((await webhooks.enable(id)).json()).toMatchObject({ enabled: true });
    expect(await subscription(id)).toMatchObject({ enabled: true, disabledAt: null });

    const after = await create();
    await expect
      .poll(() => failing.received.some(({ body }) => JSON.parse(body).id === after))
      .toBe(true);
    await expect.poll(async () => (await subscription(id)).failuresInARow).toBe(0);

    const redelivered = (await webhooks.redeliver(id)).json<{ redelivered: number }>();
    expect(redelivered.redelivered).toBeGreaterThan(0);
    await expect
      .poll(async () => {
        const [{ failed }] = await api.database.query<{ failed: number }>(
          `SELECT count(*)::integer AS failed FROM webhook_deliveries
           WHERE subscription_id = '${id}' AND status <> 'delivered'`,
        );
        return failed;
      })
      .toBe(0);
  });
});
