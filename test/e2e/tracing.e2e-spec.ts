import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  send,
  startServiceOnTestDatabase,
  type ServiceOnTestDatabase,
} from '../support/built-service.js';
import {
  OtlpReceiver,
  type ReceivedSpan,
  SPAN_KIND,
  upstreamTraceparent,
} from '../support/otlp-receiver.js';
import { describeOnEmbeddedRun } from '../support/test-database.js';

const REPORT_LOADED_MODULES = fileURLToPath(
  new URL('../support/report-loaded-modules.mjs', import.meta.url),
);
/**
 * What `--import report-loaded-modules.mjs` reports: the OpenTelemetry SDK, exporters,
 * instrumentations and module hooks. Not `@opentelemetry/api`, the no-op API that
 * prom-client has always loaded itself (a dependency of its default metrics).
 */
/** Bursts of concurrent creates sent at most until the service batched one. */
const BATCHING_BURSTS = 5;
const OPEN_TELEMETRY_MODULES = '@opentelemetry/(?!api/)|import-in-the-middle|require-in-the-middle';
const REPORTING = {
  nodeFlags: ['--import', REPORT_LOADED_MODULES],
};

let nextId = 1;

function createPlant(
  { url, token }: ServiceOnTestDatabase,
  name: string,
  headers: Record<string, string> = {},
) {
  return send(`${url}/plants`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      ...headers,
    },
    body: JSON.stringify({ id: nextId++, name }),
  });
}

/** The spans whose parent chain within the trace leads to `root`. */
function descendants(spans: ReceivedSpan[], root: ReceivedSpan): ReceivedSpan[] {
  const children = spans.filter(({ parentSpanId }) => parentSpanId === root.spanId);
  return children.flatMap((child) => [child, ...descendants(spans, child)]);
}

/**
 * Tracing as an operator turns it on: the built service, the standard OTEL_* variables,
 * and a collector (here an OTLP/HTTP receiver in the test) that records what arrives.
 */
describeOnEmbeddedRun('tracing: OTLP over HTTP/JSON to a collector', () => {
  let collector: OtlpReceiver;
  let started: ServiceOnTestDatabase;

  beforeAll(async () => {
    collector = await OtlpReceiver.start();
    started = await startServiceOnTestDatabase(
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '100',
        OTEL_SERVICE_NAME: 'plant-store-under-test',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=e2e',
        REPORT_LOADED_MODULES: OPEN_TELEMETRY_MODULES,
      },
      REPORTING,
    );
  });

  afterAll(async () => {
    await started?.stop();
    await collector?.stop();
  });

  it('gives a create one trace: the server span named by its route, with a child for each step', async () => {
    const name = `Traced fern ${randomBytes(4).toString('hex')}`;
    const answer = await createPlant(started, name);
    expect(answer.status).toBe(200);

    const server = await collector.waitForSpan(
      (span) => span.name === 'POST /plants' && span.kind === SPAN_KIND.server,
    );
    expect(server.parentSpanId ?? '').toBe('');
    expect(server.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/plants',
      'http.response.status_code': 200,
      'url.path': '/plants',
    });
    expect(server.resource).toMatchObject({
      'service.name': 'plant-store-under-test',
      'deployment.environment.name': 'e2e',
      // The detectors' attributes, by which one replica's spans are told from another's.
      'host.name': expect.any(String),
      'process.pid': expect.anything(),
      'service.instance.id': expect.any(String),
    });

    const service = await collector.waitForSpan(
      (span) => span.traceId === server.traceId && span.name === 'PlantsService.create',
    );
    const inTrace = descendants(collector.trace(server.traceId), server);
    const direct = inTrace.filter(({ parentSpanId }) => parentSpanId === server.spanId);
    expect(direct.map(({ name }) => name)).toEqual(
      expect.arrayContaining([
        'BearerAuthGuard.canActivate',
        'RateLimitGuard.canActivate',
        'RequestValidationPipe.transform',
        'PlantsService.create',
      ]),
    );
    const authentication = direct.find(({ name }) => name === 'BearerAuthGuard.canActivate');
    expect(authentication?.attributes['plant_store.token.cache']).toMatch(/^(hit|miss)$/);
    // What a step calls in turn is inside its span, not a span of its own.
    expect(inTrace.filter(({ scope }) => scope === 'plant-store')).toHaveLength(direct.length);

    // Group commit: the statement has a span of its own, in no request's trace, linked
    // both ways with the request it carried.
    expect(service.links).toHaveLength(1);
    const batch = await collector.waitForSpan(
      (span) => span.spanId === service.links[0].spanId && span.name === 'plants insert batch',
    );
    expect(batch.traceId).not.toBe(server.traceId);
    expect(batch.parentSpanId ?? '').toBe('');
    expect(batch.attributes['db.operation.batch.size']).toBeGreaterThanOrEqual(1);
    expect(batch.links).toContainEqual({ traceId: server.traceId, spanId: service.spanId });

    const statement = await collector.waitForSpan(
      (span) => span.traceId === batch.traceId && span.scope.includes('instrumentation-pg'),
    );
    expect(statement.kind).toBe(SPAN_KIND.client);
    expect(statement.attributes['db.query.text']).toContain('INSERT INTO plants');
    // Statement text, never values.
    expect(JSON.stringify(collector.spans)).not.toContain(name);
  });

  it('links the requests a batched statement carried to it, and it to each of them', async () => {
    const carriedMany = (span: ReceivedSpan) =>
      span.name === 'plants insert batch' && Number(span.attributes['db.operation.batch.size']) > 1;
    // On a busy machine a burst can reach the service one request at a time, and each
    // then goes out alone: bursts are sent until one was batched.
    for (let burst = 0; burst < BATCHING_BURSTS; burst++) {
      const answers = await Promise.all(
        Array.from({ length: 24 }, (_, n) => createPlant(started, `Batched ${burst}.${n}`)),
      );
      expect(answers.map(({ status }) => status)).toEqual(answers.map(() => 200));
      if (await collector.waitForSpan(carriedMany, 3_000).catch(() => undefined)) break;
    }
    const batch = await collector.waitForSpan(carriedMany);
    expect(batch.links).toHaveLength(Number(batch.attributes['db.operation.batch.size']));
    for (const link of batch.links) {
      const waiting = await collector.waitForSpan((span) => span.spanId === link.spanId);
      expect(waiting.traceId).toBe(link.traceId);
      expect(waiting.links).toContainEqual({ traceId: batch.traceId, spanId: batch.spanId });
    }
    expect(new Set(batch.links.map(({ traceId }) => traceId)).size).toBe(batch.links.length);
  });

  it('continues the trace of an incoming traceparent', async () => {
    const upstream = upstreamTraceparent();
    expect((await createPlant(started, 'Continued', { traceparent: upstream.header })).status).toBe(
      200,
    );
    const server = await collector.waitForSpan(
      (span) => span.traceId === upstream.traceId && span.kind === SPAN_KIND.server,
    );
    expect(server.parentSpanId).toBe(upstream.spanId);
    expect(server.name).toBe('POST /plants');
  });

  it('ignores an invalid traceparent: the request is answered and starts a trace of its own', async () => {
    for (const invalid of [
      'garbage',
      '00-00000000000000000000000000000000-b7ad6b7169203331-01',
      `00-${'a'.repeat(32)}-${'0'.repeat(16)}-01`,
      `ff-${'a'.repeat(32)}-${'b'.repeat(16)}-01`,
      `00-${'a'.repeat(5000)}`,
    ]) {
      const answer = await send(`${started.url}/plants/${nextId}`, {
        headers: { authorization: `Bearer ${started.token}`, traceparent: invalid },
      });
      expect(answer.status).toBe(404);
    }
    // Each got a server span of its own, at the root of a new trace.
    const invalidTraceIds = new Set(['0'.repeat(32), 'a'.repeat(32)]);
    const isRead = ({ name, kind }: ReceivedSpan) =>
      name === 'GET /plants/:id' && kind === SPAN_KIND.server;
    await collector.waitForSpan(() => collector.spans.filter(isRead).length >= 5);
    for (const read of collector.spans.filter(isRead)) {
      expect(read.parentSpanId ?? '').toBe('');
      expect(invalidTraceIds.has(read.traceId)).toBe(false);
    }
  });

  it('names each request log line after the span it was written in, warnings and errors too', async () => {
    const upstream = upstreamTraceparent();
    expect((await createPlant(started, 'Logged', { traceparent: upstream.header })).status).toBe(
      200,
    );
    const server = await collector.waitForSpan(
      (span) => span.traceId === upstream.traceId && span.kind === SPAN_KIND.server,
    );
    const requestLine = started.service
      .logLines()
      .find((line) => line.msg === 'request completed' && line.trace_id === upstream.traceId);
    expect(requestLine).toMatchObject({ span_id: server.spanId, trace_flags: '01' });

    // A request that fails while the database is away logs a warning or an error.
    await started.database.setReachable(false);
    const failing = upstreamTraceparent();
    try {
      const answer = await send(`${started.url}/plants?limit=5`, {
        headers: { authorization: `Bearer ${started.token}`, traceparent: failing.header },
      });
      expect(answer.status).toBe(503);
    } finally {
      await started.database.setReachable(true);
    }
    const problems = started.service
      .logLines()
      .filter(
        (line) =>
          (line.level === 'warn' || line.level === 'error') && line.trace_id === failing.traceId,
      );
    expect(problems.length).toBeGreaterThan(0);
    for (const line of problems) expect(line.span_id).toMatch(/^[0-9a-f]{16}$/);
  });

  it('loads OpenTelemetry (the check below sees its modules when they are there)', () => {
    expect(started.service.output.stderr).toMatch(/loaded .*@opentelemetry\/sdk-trace/);
  });
});

describeOnEmbeddedRun('tracing: OTLP over HTTP/protobuf, the default protocol', () => {
  it('exports the spans of a create, with the trace id of its traceparent', async () => {
    const collector = await OtlpReceiver.start();
    const started = await startServiceOnTestDatabase({
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${collector.endpoint}/v1/traces`,
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    try {
      const upstream = upstreamTraceparent();
      expect(
        (await createPlant(started, 'Protobuf', { traceparent: upstream.header })).status,
      ).toBe(200);
      const traceIdBytes = Buffer.from(upstream.traceId, 'hex');
      const deadline = Date.now() + 15_000;
      while (!collector.protobufBodies.some((body) => body.includes(traceIdBytes))) {
        expect(Date.now()).toBeLessThan(deadline);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(collector.exports[0]).toMatchObject({
        path: '/v1/traces',
        contentType: 'application/x-protobuf',
      });
    } finally {
      await started.stop();
      await collector.stop();
    }
  });
});

/** The variables the service reads itself, where NodeSDK would have (open-telemetry.ts). */
describeOnEmbeddedRun(
  'tracing with the propagators OTEL_PROPAGATORS names, and the span limits',
  () => {
    it("continues a trace that comes in by B3's headers, warns of a name it does not serve, and keeps a span's attributes within OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", async () => {
      const collector = await OtlpReceiver.start();
      const started = await startServiceOnTestDatabase({
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '100',
        OTEL_PROPAGATORS: 'b3multi,unheard-of',
        OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT: '2',
      });
      try {
        const upstream = upstreamTraceparent();
        const headers = {
          'x-b3-traceid': upstream.traceId,
          'x-b3-spanid': upstream.spanId,
          'x-b3-sampled': '1',
        };
        expect((await createPlant(started, 'B3', headers)).status).toBe(200);
        const server = await collector.waitForSpan(
          (span) => span.traceId === upstream.traceId && span.kind === SPAN_KIND.server,
        );
        expect(server.parentSpanId).toBe(upstream.spanId);
        // Without the limit a server span has four at least (the first describe's test).
        expect(Object.keys(server.attributes)).toHaveLength(2);
        expect(
          started.service
            .logLines()
            .some(
              (line) =>
                line.level === 'warn' &&
                line.context === 'OpenTelemetry' &&
                String(line.msg).includes('unheard-of'),
            ),
        ).toBe(true);
      } finally {
        await started.stop();
        await collector.stop();
      }
    });
  },
);

describeOnEmbeddedRun('tracing one request in N (a ratio sampler)', () => {
  it('records a group-commit batch whenever a request it carried is recorded, whatever the ratio', async () => {
    const collector = await OtlpReceiver.start();
    // A ratio of 0 records no trace of its own: only those whose caller sampled them.
    const started = await startServiceOnTestDatabase({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0',
    });
    try {
      const upstream = upstreamTraceparent();
      const unsampled = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-00`;
      expect((await createPlant(started, 'Not sampled', { traceparent: unsampled })).status).toBe(
        200,
      );
      expect((await createPlant(started, 'Sampled', { traceparent: upstream.header })).status).toBe(
        200,
      );
      const service = await collector.waitForSpan(
        (span) => span.traceId === upstream.traceId && span.name === 'PlantsService.create',
      );
      const batch = await collector.waitForSpan((span) => span.spanId === service.links[0]?.spanId);
      expect(batch.name).toBe('plants insert batch');
      expect(batch.links).toContainEqual({ traceId: upstream.traceId, spanId: service.spanId });
      expect(collector.trace(unsampled.split('-')[1])).toEqual([]);
    } finally {
      await started.stop();
      await collector.stop();
    }
  });
});

describeOnEmbeddedRun('tracing at a stop', () => {
  /** Long enough that nothing is exported before the stop, but for what the stop flushes. */
  const NO_EXPORT_BEFORE_THE_STOP = { OTEL_BSP_SCHEDULE_DELAY: '600000' };

  it('exports the spans still queued before the process exits', async () => {
    const collector = await OtlpReceiver.start();
    const started = await startServiceOnTestDatabase({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      ...NO_EXPORT_BEFORE_THE_STOP,
    });
    try {
      const upstream = upstreamTraceparent();
      expect((await createPlant(started, 'Flushed', { traceparent: upstream.header })).status).toBe(
        200,
      );
      expect(collector.spans).toEqual([]);
      started.service.signal('SIGTERM');
      expect((await started.service.exited).code).toBe(0);
      expect(collector.trace(upstream.traceId).map(({ name }) => name)).toContain('POST /plants');
    } finally {
      await started.stop();
      await collector.stop();
    }
  });

  it('waits for a collector that never answers no longer than its bound (3 s)', async () => {
    const collector = await OtlpReceiver.start();
    collector.answer = () => 'hang';
    const started = await startServiceOnTestDatabase({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      ...NO_EXPORT_BEFORE_THE_STOP,
    });
    try {
      expect((await createPlant(started, 'Never exported')).status).toBe(200);
      const stoppedAt = performance.now();
      started.service.signal('SIGTERM');
      expect((await started.service.exited).code).toBe(0);
      // The drain (a quarter of a second here), then the flush's bound, with room to spare.
      expect(performance.now() - stoppedAt).toBeLessThan(6_000);
      expect(collector.exports.length).toBeGreaterThan(0);
    } finally {
      await started.stop();
      await collector.stop();
    }
  });
});

describeOnEmbeddedRun('tracing off (no OTEL_* variable asks for it)', () => {
  it('loads no OpenTelemetry module at all, and warns of an exporter named that it does not serve', async () => {
    const started = await startServiceOnTestDatabase(
      { REPORT_LOADED_MODULES: OPEN_TELEMETRY_MODULES, OTEL_TRACES_EXPORTER: 'console' },
      REPORTING,
    );
    try {
      expect((await createPlant(started, 'Untraced')).status).toBe(200);
      const answer = await send(`${started.url}/plants/${nextId - 1}`, {
        headers: { authorization: `Bearer ${started.token}` },
      });
      expect(answer.status).toBe(200);
      expect(started.service.output.stderr).not.toContain('loaded ');
      const requestLine = started.service
        .logLines()
        .find((line) => line.msg === 'request completed');
      expect(requestLine).toBeDefined();
      expect(requestLine).not.toHaveProperty('trace_id');
      expect(started.service.logLines()).toContainEqual(
        expect.objectContaining({
          level: 'warn',
          context: 'Tracing',
          msg: 'OTEL_TRACES_EXPORTER: console is not served (otlp and none are); left out',
        }),
      );
    } finally {
      await started.stop();
    }
  });
});

describeOnEmbeddedRun('tracing settings a start refuses', () => {
  it('refuses a protocol it cannot export with, at start', async () => {
    const { ServiceProcess } = await import('../support/built-service.js');
    const service = new ServiceProcess({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4317',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
    });
    const exit = await service.exited;
    expect(exit.code).toBe(1);
    expect(service.output.stderr).toContain(
      'OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json',
    );
  });

  it.each<{ refused: string; setting: Record<string, string>; reason: string }>([
    {
      refused: 'a sampler it does not know',
      setting: { OTEL_TRACES_SAMPLER: 'sometimes' },
      reason: 'OTEL_TRACES_SAMPLER must be one of always_on, parentbased_always_on',
    },
    {
      refused: 'a configuration error of its own',
      setting: { PORT: 'eighty' },
      reason: 'PORT must be an integer from 0 to 65535',
    },
  ])(
    'refuses $refused at start, after the tracing warnings written before it',
    async ({ setting, reason }) => {
      const { ServiceProcess } = await import('../support/built-service.js');
      const service = new ServiceProcess({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
        OTEL_PROPAGATORS: 'tracecontext,xray',
        ...setting,
      });
      const exit = await service.exited;
      expect(exit.code).toBe(1);
      const stderr = service.output.stderr;
      const warning = stderr.indexOf('OpenTelemetry: OTEL_PROPAGATORS: xray is not served');
      expect(warning, stderr).toBeGreaterThanOrEqual(0);
      expect(stderr.indexOf(reason, warning), stderr).toBeGreaterThan(warning);
    },
  );
});
