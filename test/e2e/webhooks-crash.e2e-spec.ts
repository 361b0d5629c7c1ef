import { afterEach, describe, expect, it } from 'vitest';
import {
  issueToken,
  runTokenCli,
  send,
  type ServiceProcess,
  startService,
} from '../support/built-service.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { verifySignature, WebhookReceiver } from '../support/webhook-receiver.js';

/** The built service, its worker idle for a minute and deaf to new events: nothing is sent before the kill. */
const WORKER_ASLEEP = { WEBHOOK_POLL_INTERVAL_MS: '60000', WEBHOOK_LISTEN: 'false' };
const WORKER_AWAKE = { WEBHOOK_POLL_INTERVAL_MS: '20' };

describe('kill -9 of the built service between a create and its delivery', () => {
  let database: TestDatabase | undefined;
  let service: ServiceProcess | undefined;
  let receiver: WebhookReceiver | undefined;

  afterEach(async () => {
    await service?.stop();
    await receiver?.stop();
    await database?.drop();
  });

  it('delivers the plant after the restart, once, signed', async () => {
    database = await createTestDatabase();
    receiver = await WebhookReceiver.start();
    const env = { ...database.env, WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' };
    let url: string;
    ({ service, url } = await startService({ ...env, ...WORKER_ASLEEP }));
    const plantsToken = await issueToken(database);
    const hooks = await runTokenCli(['create', '--name', 'hooks', '--scopes', 'webhooks:manage'], {
      ...database.env,
    });
    expect(hooks.code).toBe(0);
    const subscribed = await send(`${url}/webhooks`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${hooks.stdout.trim()}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ url: receiver.url }),
    });
    expect(subscribed.status).toBe(201);
    const { secret } = JSON.parse(subscribed.body) as { secret: string };

    const created = await send(`${url}/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${plantsToken}`, 'content-type': 'application/json' },
      body: '{"id":9223372036854775806,"name":"Survivor"}',
    });
    expect(created.status).toBe(200);
    service.signal('SIGKILL');
    expect(await service.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(receiver.received).toEqual([]);

    ({ service } = await startService({ ...env, ...WORKER_AWAKE }));
    const [delivery] = await receiver.waitFor(1);
    expect(delivery.body).toBe('{"id":9223372036854775806,"name":"Survivor"}');
    expect(() => verifySignature(secret, delivery)).not.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received).toHaveLength(1);
  });
});
