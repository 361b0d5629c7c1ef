import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  issueToken,
  runTokenCli,
  send,
  type ServiceProcess,
  startService,
  startServiceOnTestDatabase,
  type ServiceOnTestDatabase,
} from '../support/built-service.js';
import {
  OtlpReceiver,
  type ReceivedSpan,
  SPAN_KIND,
  upstreamTraceparent,
} from '../support/otlp-receiver.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { type ReceivedDelivery, WebhookReceiver } from '../support/webhook-receiver.js';

const ATTEMPT_SPAN = 'webhook delivery';
/** A worker that claims at once, to a receiver on loopback. */
const WORKER = { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_POLL_INTERVAL_MS: '20' };

/** Tracing as an operator turns it on, exporting to `collector` soon after each span ends. */
function tracedBy(collector: OtlpReceiver): Record<string, string> {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '100',
  };
}

/** Subscribes `receiver` with a token of its own (webhooks:manage); answers the subscription's id. */
async function subscribe(url: string, databaseUrl: string, receiver: WebhookReceiver) {
  const issued = await runTokenCli(['create', '--name', 'hooks', '--scopes', 'webhooks:manage'], {
    DATABASE_URL: databaseUrl,
  });
  expect(issued.code).toBe(0);
  const subscribed = await send(`${url}/webhooks`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${issued.stdout.trim()}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ url: receiver.url }),
  });
  expect(subscribed.status).toBe(201);
  return (JSON.parse(subscribed.body) as { id: string }).id;
}

let nextId = 1;

/** Creates a plant as a traced upstream service would, with its `traceparent`; answers its id. */
async function createPlant(url: string, token: string, headers: Record<string, string> = {}) {
  const id = nextId++;
  const created = await send(`${url}/plants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ id, name: `Traced ${id}` }),
  });
  expect(created.status).toBe(200);
  return id;
}

function deliveryOf(receiver: WebhookReceiver, plantId: number): ReceivedDelivery | undefined {
  return receiver.received.find(({ body }) => (JSON.parse(body) as { id: number }).id === plantId);
}

/**
 * The spans from `span`'s parent up to the one whose parent is `rootParentSpanId` (the
 * upstream caller's, which is not exported), each awaited until it has arrived.
 */
async function ancestors(
  collector: OtlpReceiver,
  span: ReceivedSpan,
  rootParentSpanId: string,
): Promise<ReceivedSpan[]> {
  const chain: ReceivedSpan[] = [];
  let child = span;
  while (child.parentSpanId !== rootParentSpanId) {
    expect(child.parentSpanId ?? '').not.toBe('');
    const parentSpanId = child.parentSpanId;
    child = await collector.waitForSpan(
      (candidate) => candidate.traceId === span.traceId && candidate.spanId === parentSpanId,
    );
    chain.push(child);
  }
  return chain;
}

/** The create's spans an attempt's span descends from, from its parent up to the server span. */
const CREATE_CHAIN = ['PlantsService.create', 'POST /plants'];

/**
 * Each delivery attempt is a span in the trace of the create that produced it, carried to
 * the receiver as `traceparent`: the built service, a collector (an OTLP/HTTP receiver in
 * the test) and a webhook receiver, as an operator and a subscriber run them.
 */
describe('webhook deliveries in the trace of their create', () => {
  let collector: OtlpReceiver;
  let receiver: WebhookReceiver;
  let started: ServiceOnTestDatabase;
  let subscriptionId: string;

  beforeAll(async () => {
    collector = await OtlpReceiver.start();
    receiver = await WebhookReceiver.start();
    started = await startServiceOnTestDatabase({ ...tracedBy(collector), ...WORKER });
    subscriptionId = await subscribe(started.url, started.database.url, receiver);
  });

  afterAll(async () => {
    await started?.stop();
    await receiver?.stop();
    await collector?.stop();
  });

  it("sends the create's trace to the receiver, and exports the attempt as a client span in it", async () => {
    const upstream = upstreamTraceparent();
    const plantId = await createPlant(started.url, started.token, {
      traceparent: upstream.header,
    });
    await receiver.waitFor(1);
    const delivery = deliveryOf(receiver, plantId)!;
    const [, traceId, parentSpanId, flags] = String(delivery.headers.traceparent).split('-');
    expect({ traceId, flags }).toEqual({ traceId: upstream.traceId, flags: '01' });

    const attempt = await collector.waitForSpan(
      (span) => span.traceId === upstream.traceId && span.name === ATTEMPT_SPAN,
    );
    // The receiver's parent is the attempt itself.
    expect(attempt.spanId).toBe(parentSpanId);
    expect(attempt.kind).toBe(SPAN_KIND.client);
    expect(attempt.status?.code ?? 0).not.toBe(2);
    expect(attempt.attributes).toEqual({
      'http.request.method': 'POST',
      'http.response.status_code': 200,
      'url.full': receiver.url,
      'server.address': '127.0.0.1',
      'server.port': receiver.port,
      'plant_store.webhook.subscription_id': subscriptionId,
      'plant_store.webhook.attempt': 1,
      'plant_store.webhook.message_id': delivery.headers['webhook-id'],
    });
    const chain = await ancestors(collector, attempt, upstream.spanId);
    expect(chain.map(({ name }) => name)).toEqual(CREATE_CHAIN);

    // What carried it there: the traceparent stored with the delivery.
    const [stored] = await started.database.query<{ trace_context: string }>(
      'SELECT trace_context FROM webhook_deliveries',
    );
    expect(stored.trace_context).toBe(`00-${upstream.traceId}-${chain[0].spanId}-01`);
  });

  it('gives each create of a batched insert its own trace, and each delivery that trace', async () => {
    // Every third caller did not sample its trace: its create is not recorded, and its
    // delivery is not in that trace, though it shares a statement with recorded ones.
    const creates = Array.from({ length: 24 }, (_, index) => {
      const upstream = upstreamTraceparent();
      const sampled = index % 3 !== 0;
      return {
        ...upstream,
        sampled,
        header: sampled ? upstream.header : upstream.header.replace(/-01$/, '-00'),
      };
    });
    // While the table is locked, the statements the service keeps in flight wait, and the
    // creates sent meanwhile gather into one statement: a batch, however fast the machine.
    const locker = new pg.Client({ connectionString: started.database.adminUrl });
    await locker.connect();
    let plantIds: number[];
    try {
      await locker.query('BEGIN; LOCK TABLE plants IN EXCLUSIVE MODE');
      const answered = Promise.all(
        creates.map(({ header }) =>
          createPlant(started.url, started.token, { traceparent: header }),
        ),
      );
      const waitingForLock = async () =>
        (
          await started.database.query<{ waiting: number }>(
            `SELECT count(*)::integer AS waiting FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock'`,
          )
        )[0].waiting;
      await expect.poll(waitingForLock, { timeout: 10_000 }).toBeGreaterThan(0);
      // Time for the other creates to pass the guards and queue up behind them.
      await new Promise((resolve) => setTimeout(resolve, 500));
      await locker.query('COMMIT');
      plantIds = await answered;
    } finally {
      await locker.end();
    }
    // The creates shared statements: the batch path, one row's trace each, was taken.
    const traceIds = new Set(creates.map(({ traceId }) => traceId));
    await collector.waitForSpan(
      (span) =>
        span.name === 'plants insert batch' &&
        Number(span.attributes['db.operation.batch.size']) > 1 &&
        span.links.some(({ traceId }) => traceIds.has(traceId)),
    );
    await receiver.waitFor(1 + creates.length);
    for (const [index, upstream] of creates.entries()) {
      const delivery = deliveryOf(receiver, plantIds[index])!;
      if (!upstream.sampled) {
        // Its attempt starts a trace of its own, as a worker's untraced work does.
        expect(String(delivery.headers.traceparent)).not.toContain(upstream.traceId);
        continue;
      }
      expect(String(delivery.headers.traceparent)).toMatch(
        new RegExp(`^00-${upstream.traceId}-[0-9a-f]{16}-01$`),
      );
      const attempt = await collector.waitForSpan(
        (span) => span.traceId === upstream.traceId && span.name === ATTEMPT_SPAN,
      );
      const chain = await ancestors(collector, attempt, upstream.spanId);
      expect(chain.map(({ name }) => name)).toEqual(CREATE_CHAIN);
    }
    const unsampled = new Set(
      creates.filter(({ sampled }) => !sampled).map(({ traceId }) => traceId),
    );
    expect(collector.spans.filter(({ traceId }) => unsampled.has(traceId))).toEqual([]);
  });

  it('fails the span of an attempt the receiver refuses, with its status', async () => {
    receiver.answer = () => 503;
    try {
      const upstream = upstreamTraceparent();
      await createPlant(started.url, started.token, { traceparent: upstream.header });
      const attempt = await collector.waitForSpan(
        (span) => span.traceId === upstream.traceId && span.name === ATTEMPT_SPAN,
      );
      expect(attempt.attributes['http.response.status_code']).toBe(503);
      expect(attempt.status).toMatchObject({ code: 2, message: 'the receiver answered 503' });
    } finally {
      receiver.answer = () => 200;
    }
  });
});

describe('a delivery sent after a restart, by another process', () => {
  let database: TestDatabase | undefined;
  let collector: OtlpReceiver | undefined;
  let receiver: WebhookReceiver | undefined;
  const services: ServiceProcess[] = [];

  afterEach(async () => {
    for (const service of services) await service.stop();
    await receiver?.stop();
    await collector?.stop();
    await database?.drop();
  });

  it("is still in the create's trace: the trace context is stored with it", async () => {
    database = await createTestDatabase();
    collector = await OtlpReceiver.start();
    receiver = await WebhookReceiver.start();
    // A failed attempt is retried after about a second, by whichever process is running.
    const env = {
      ...database.env,
      ...tracedBy(collector),
      ...WORKER,
      WEBHOOK_RETRY_BASE_MS: '1000',
    };
    const first = await startService({
      ...env,
      OTEL_RESOURCE_ATTRIBUTES: 'service.instance.id=first',
    });
    services.push(first.service);
    await subscribe(first.url, database.url, receiver);
    const plantsToken = await issueToken(database);

    // The receiver is down: the first attempt fails, and the delivery waits for a retry.
    await receiver.stop();
    const upstream = upstreamTraceparent();
    await createPlant(first.url, plantsToken, { traceparent: upstream.header });
    const failed = await collector.waitForSpan(
      (span) => span.traceId === upstream.traceId && span.name === ATTEMPT_SPAN,
    );
    expect(failed.status?.code).toBe(2);
    expect(failed.resource['service.instance.id']).toBe('first');
    // Stopped as a deployment stops it: an attempt under way is recorded first, so the
    // delivery is due again at its retry, not at the end of its lease.
    first.service.signal('SIGTERM');
    expect(await first.service.exited).toEqual({ code: 0, signal: null });
    await ancestors(collector, failed, upstream.spanId);

    await receiver.restart();
    const second = await startService({
      ...env,
      OTEL_RESOURCE_ATTRIBUTES: 'service.instance.id=second',
    });
    services.push(second.service);
    const [delivery] = await receiver.waitFor(1);
    const [, traceId, parentSpanId] = String(delivery.headers.traceparent).split('-');
    expect(traceId).toBe(upstream.traceId);
    const sent = await collector.waitForSpan(
      (span) =>
        span.traceId === upstream.traceId &&
        span.name === ATTEMPT_SPAN &&
        span.attributes['http.response.status_code'] === 200,
    );
    expect(sent.spanId).toBe(parentSpanId);
    expect(sent.resource['service.instance.id']).toBe('second');
    expect(sent.attributes['plant_store.webhook.attempt']).toBeGreaterThan(1);
    // A child of the create's span, as the failed attempt was.
    expect(sent.parentSpanId).toBe(failed.parentSpanId);
  });
});

describe('WEBHOOK_SEND_TRACE_CONTEXT=false', () => {
  it('sends no traceparent to the receiver, and still exports the span', async () => {
    const collector = await OtlpReceiver.start();
    const receiver = await WebhookReceiver.start();
    const started = await startServiceOnTestDatabase({
      ...tracedBy(collector),
      ...WORKER,
      WEBHOOK_SEND_TRACE_CONTEXT: 'false',
    });
    try {
      await subscribe(started.url, started.database.url, receiver);
      const upstream = upstreamTraceparent();
      await createPlant(started.url, started.token, { traceparent: upstream.header });
      const [delivery] = await receiver.waitFor(1);
      expect(delivery.headers).not.toHaveProperty('traceparent');
      const attempt = await collector.waitForSpan(
        (span) => span.traceId === upstream.traceId && span.name === ATTEMPT_SPAN,
      );
      expect(attempt.kind).toBe(SPAN_KIND.client);
      expect(attempt.attributes['http.response.status_code']).toBe(200);
    } finally {
      await started.stop();
      await receiver.stop();
      await collector.stop();
    }
  });
});

describe('tracing off', () => {
  it('delivers as before, with no traceparent, and stores none', async () => {
    const receiver = await WebhookReceiver.start();
    const started = await startServiceOnTestDatabase(WORKER);
    try {
      await subscribe(started.url, started.database.url, receiver);
      // An upstream's trace context is not passed on by a service that does not trace.
      const plantId = await createPlant(started.url, started.token, {
        traceparent: upstreamTraceparent().header,
      });
      const [delivery] = await receiver.waitFor(1);
      expect(JSON.parse(delivery.body)).toEqual({ id: plantId, name: `Traced ${plantId}` });
      expect(delivery.headers).not.toHaveProperty('traceparent');
      expect(await started.database.query('SELECT trace_context FROM webhook_deliveries')).toEqual([
        { trace_context: null },
      ]);
    } finally {
      await started.stop();
      await receiver.stop();
    }
  });
});
