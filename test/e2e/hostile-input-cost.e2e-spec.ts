import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BODY_LIMIT_BYTES } from '../../src/common/http/http-app.js';
import {
  type Answer,
  send,
  startServiceOnTestDatabase,
  type ServiceOnTestDatabase,
} from '../support/built-service.js';
import { HOSTILE_BODIES, members, zeros } from '../support/hostile-json-bodies.js';
import { OtlpReceiver } from '../support/otlp-receiver.js';
import { describeOnEmbeddedRun } from '../support/test-database.js';

/** How long /health/live may take while hostile requests are processed. */
const PROBE_LIMIT_MS = 100;
/** Copies of each hostile request sent back to back, so that processing spans the probes. */
const COPIES = 3;
const ATTEMPTS = 3;
/** A probe slower than this was held by the service, not by a busy machine. */
const NOISE_CEILING_MS = 1_000;
const isNoise = (probeMs: number) => probeMs >= PROBE_LIMIT_MS && probeMs < NOISE_CEILING_MS;
/** Room under Node's 16 KiB header limit for the request line and the other headers. */
const HEADER_BUDGET = 15_000;

const base64url = (text: string) => Buffer.from(text).toString('base64url');

/** Query strings and headers as long as Node takes them, aimed at what reads them. */
const HOSTILE_TARGETS: Array<[string, string, Record<string, string>]> = [
  ['a limit 1, zeros, 1', `/plants?limit=1${zeros(HEADER_BUDGET)}1`, {}],
  ['a cursor of 1, zeros, 1', `/plants?cursor=${base64url(`1${zeros(HEADER_BUDGET * 0.7)}1`)}`, {}],
  [
    'a cursor of 1.0, zeros, 1',
    `/plants?cursor=${base64url(`1.0${zeros(HEADER_BUDGET * 0.7)}1`)}`,
    {},
  ],
  [
    'a cursor of nines and a letter',
    `/plants?cursor=${base64url(`${'9'.repeat(HEADER_BUDGET * 0.7)}x`)}`,
    {},
  ],
  ['a long tag of escapes', `/plants?tag=${'%00'.repeat(HEADER_BUDGET / 3)}`, {}],
  [
    'thousands of query parameters',
    `/plants?${members(HEADER_BUDGET / 6, (i) => `t${i}=1`)}&limit=0`,
    {},
  ],
  [
    'a query parameter repeated thousands of times',
    `/plants?${'tag=a&'.repeat(HEADER_BUDGET / 6)}`,
    {},
  ],
  ['an id path parameter 1, zeros, 1', `/plants/1${zeros(98)}1`, {}],
  ['a long path', `/plants/${'%30'.repeat(HEADER_BUDGET / 3)}`, {}],
  // Looked up once per method, to tell a 405 from a 404.
  ['a long path no route has', `/${'a'.repeat(HEADER_BUDGET)}`, {}],
  ['a long sane X-Request-Id', '/plants/x', { 'x-request-id': 'a'.repeat(HEADER_BUDGET) }],
  [
    'a long X-Request-Id, sane but for its end',
    '/plants/x',
    { 'x-request-id': `${'a'.repeat(HEADER_BUDGET)}!` },
  ],
];

/** Every operation that takes a JSON body. */
const BODY_ROUTES: Array<[string, string]> = [
  ['POST', '/plants'],
  ['PUT', '/plants/1'],
  ['POST', '/webhooks'],
];

/** Authorization headers the bearer parsing must take apart in linear time. */
const HOSTILE_AUTHORIZATIONS: Array<[string, string]> = [
  ['a long bearer token', `Bearer ${'a'.repeat(HEADER_BUDGET)}`],
  ['a bearer token of spaces', `Bearer${' '.repeat(HEADER_BUDGET)}x`],
  ['a long scheme', `${'Bearer'.repeat(HEADER_BUDGET / 6)} x`],
];

/** A valid W3C `traceparent`, for the headers that only count beside one. */
const TRACEPARENT = `00-${'1'.repeat(32)}-${'1'.repeat(16)}-01`;

/**
 * Headers that tracing reads before authentication, with tracing on: the propagators'
 * (W3C trace context and baggage, B3 single and multi-header) and those a recorded
 * request's server span copies.
 */
const HOSTILE_TRACE_HEADERS: Array<[string, Record<string, string>]> = [
  [
    'a traceparent with a long tail',
    { traceparent: `${TRACEPARENT}-${'a'.repeat(HEADER_BUDGET)}` },
  ],
  ['a traceparent of hex digits', { traceparent: 'f'.repeat(HEADER_BUDGET) }],
  [
    'a tracestate of thousands of members',
    { traceparent: TRACEPARENT, tracestate: members(HEADER_BUDGET / 8, (i) => `k${i}=v`) },
  ],
  [
    'a tracestate of one long value',
    { traceparent: TRACEPARENT, tracestate: `k=${'v'.repeat(HEADER_BUDGET)}` },
  ],
  ['a baggage of thousands of members', { baggage: members(HEADER_BUDGET / 8, (i) => `k${i}=v`) }],
  ['a baggage of escapes', { baggage: `k=${'%25'.repeat(HEADER_BUDGET / 3)}` }],
  ['a long b3', { b3: `${'a'.repeat(32)}-${'b'.repeat(HEADER_BUDGET)}-1` }],
  [
    'long B3 multi-headers',
    { 'x-b3-traceid': 'a'.repeat(HEADER_BUDGET / 2), 'x-b3-spanid': 'b'.repeat(HEADER_BUDGET / 2) },
  ],
  ['a long User-Agent, which a recorded span keeps', { 'user-agent': 'a'.repeat(HEADER_BUDGET) }],
];

/**
 * Sends hostile requests to the service at `url()` while probing its `/health/live`, and
 * keeps the slowest probe of each, to be printed.
 */
function hostileProbes(url: () => string) {
  const slowestProbes: Record<string, number> = {};

  /**
   * Sends COPIES of a request back to back and, on another connection, probes
   * /health/live one probe after the other until every copy is answered: an event loop
   * blocked by any copy delays the probe in flight. Other work on a shared machine can
   * delay a probe too, so this is done up to ATTEMPTS times and the calmest one counts;
   * a request that blocks the loop delays a probe in every attempt, and by more than
   * NOISE_CEILING_MS is not tried again.
   */
  async function probeWhileProcessing(name: string, request: () => Promise<Answer>) {
    let calmest = await burstWithProbes(request);
    for (let attempt = 1; attempt < ATTEMPTS && isNoise(calmest.slowestProbeMs); attempt++) {
      const next = await burstWithProbes(request);
      if (next.slowestProbeMs < calmest.slowestProbeMs) calmest = next;
    }
    slowestProbes[name] = Math.round(calmest.slowestProbeMs);
    return calmest;
  }

  async function burstWithProbes(request: () => Promise<Answer>) {
    const answers = Promise.all(Array.from({ length: COPIES }, request));
    let answered = false;
    void answers.finally(() => (answered = true));
    const probesMs: number[] = [];
    do {
      const probeStarted = performance.now();
      const probe = await send(`${url()}/health/live`);
      probesMs.push(performance.now() - probeStarted);
      expect(probe.status).toBe(200);
    } while (!answered);
    return { answers: await answers, slowestProbeMs: Math.max(...probesMs) };
  }

  const withBody =
    (method: string, target: string, body: string, headers: Record<string, string> = {}) =>
    () =>
      send(`${url()}${target}`, {
        method,
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
  const get =
    (target: string, headers: Record<string, string> = {}) =>
    () =>
      send(`${url()}${target}`, { headers });

  return { slowestProbes, probeWhileProcessing, withBody, get };
}

function expectRefusedInErrorShape(answers: Answer[], status?: number) {
  for (const answer of answers) {
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.status).toBeLessThan(500);
    if (status !== undefined) expect(answer.status).toBe(status);
    expect(JSON.parse(answer.body)).toEqual({
      error: answer.status,
      message: expect.any(String),
    });
  }
}

describeOnEmbeddedRun(
  'hostile input costs linear time: the service stays responsive (the built service)',
  () => {
    let started: ServiceOnTestDatabase;
    let token: string;
    const { slowestProbes, probeWhileProcessing, withBody, get } = hostileProbes(() => started.url);

    beforeAll(async () => {
      started = await startServiceOnTestDatabase();
      ({ token } = started);
    });
    afterAll(async () => {
      await started?.stop();
      console.info('slowest /health/live probe per hostile request (ms):', slowestProbes);
    });

    describe.each([
      ['without a token', () => ({})],
      ['with a token', () => ({ authorization: `Bearer ${token}` })],
    ])('%s', (who, credentials) => {
      describe.each(BODY_ROUTES)('%s %s', (method, target) => {
        it.each(HOSTILE_BODIES)('with %s', async (shape, body) => {
          expect(Buffer.byteLength(body)).toBeLessThanOrEqual(BODY_LIMIT_BYTES);
          const { answers, slowestProbeMs } = await probeWhileProcessing(
            `${who}: ${method} ${target} ${shape}`,
            withBody(method, target, body, credentials()),
          );
          expect(slowestProbeMs).toBeLessThan(PROBE_LIMIT_MS);
          expectRefusedInErrorShape(answers);
          // The operation was found: its body was read, not skipped by a 404.
          for (const { status } of answers) expect(status).not.toBe(404);
        });
      });

      it.each(HOSTILE_TARGETS)('GET with %s', async (shape, target, headers) => {
        const { answers, slowestProbeMs } = await probeWhileProcessing(
          `${who}: GET ${shape}`,
          get(target, { ...headers, ...credentials() }),
        );
        expect(slowestProbeMs).toBeLessThan(PROBE_LIMIT_MS);
        expectRefusedInErrorShape(answers);
      });
    });

    it('PATCH with a long path a route has (the docs assets), looked up once per method: 405', async () => {
      const { answers, slowestProbeMs } = await probeWhileProcessing(
        'PATCH a long path',
        withBody('PATCH', `/docs/${'a'.repeat(HEADER_BUDGET)}`, '{}'),
      );
      expect(slowestProbeMs).toBeLessThan(PROBE_LIMIT_MS);
      expectRefusedInErrorShape(answers, 405);
    });

    it.each(HOSTILE_AUTHORIZATIONS)('GET /plants with %s', async (shape, authorization) => {
      const { answers, slowestProbeMs } = await probeWhileProcessing(
        `Authorization: ${shape}`,
        get('/plants', { authorization }),
      );
      expect(slowestProbeMs).toBeLessThan(PROBE_LIMIT_MS);
      expectRefusedInErrorShape(answers, 401);
    });
  },
);

describeOnEmbeddedRun(
  'hostile trace-context headers cost linear time with tracing on (the built service)',
  () => {
    let collector: OtlpReceiver;
    let started: ServiceOnTestDatabase;
    const { slowestProbes, probeWhileProcessing, get } = hostileProbes(() => started.url);

    beforeAll(async () => {
      collector = await OtlpReceiver.start();
      started = await startServiceOnTestDatabase({
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
        OTEL_PROPAGATORS: 'tracecontext,baggage,b3,b3multi',
        // JSON, which the receiver reads back (the last test).
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '100',
      });
    });
    afterAll(async () => {
      await started?.stop();
      await collector?.stop();
      console.info('slowest /health/live probe per hostile header, traced (ms):', slowestProbes);
    });

    it.each(HOSTILE_TRACE_HEADERS)('GET /plants with %s', async (shape, headers) => {
      const { answers, slowestProbeMs } = await probeWhileProcessing(
        shape,
        get('/plants', headers),
      );
      expect(slowestProbeMs).toBeLessThan(PROBE_LIMIT_MS);
      expectRefusedInErrorShape(answers, 401);
    });

    it('traced those requests: the long User-Agent reached the collector in a server span', async () => {
      const server = await collector.waitForSpan(
        (span) => String(span.attributes['user_agent.original'] ?? '').length === HEADER_BUDGET,
      );
      expect(server.name).toBe('GET /plants');
    });
  },
);
