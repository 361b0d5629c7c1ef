import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  send,
  startServiceOnTestDatabase,
  type ServiceOnTestDatabase,
} from '../support/built-service.js';
import {
  exemplars,
  families,
  misnamedSamples,
  OPENMETRICS_TEXT,
  PROMETHEUS_ACCEPT,
  PROMETHEUS_TEXT,
} from '../support/metrics-text.js';
import { type CollectorAnswer, OtlpReceiver } from '../support/otlp-receiver.js';
import { describeOnEmbeddedRun } from '../support/test-database.js';

/** OTLP's SpanKind of a server span. */
const SERVER = 2;

/** The built service exporting its traces to a receiver of its own, answering as `answer` says. */
async function tracedService(
  answer: () => CollectorAnswer,
  env: Record<string, string> = {},
): Promise<{ receiver: OtlpReceiver; running: ServiceOnTestDatabase }> {
  const receiver = await OtlpReceiver.start();
  receiver.answer = answer;
  try {
    const running = await startServiceOnTestDatabase({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      ...env,
    });
    return { receiver, running };
  } catch (error) {
    await receiver.stop();
    throw error;
  }
}

/** A `traceparent` starting a trace of our choosing, sampled or not. */
function traceparent(traceId: string, sampled: boolean): string {
  return `00-${traceId}-${randomBytes(8).toString('hex')}-${sampled ? '01' : '00'}`;
}

const newTraceId = () => randomBytes(16).toString('hex');

// What the metrics and traces say, not the database: the embedded run covers it.
describeOnEmbeddedRun('GET /metrics with tracing', () => {
  let receiver: OtlpReceiver;
  let running: ServiceOnTestDatabase;
  /** A Prometheus scrape taken before any OpenMetrics one. */
  let firstPrometheusScrape: string;

  beforeAll(async () => {
    ({ receiver, running } = await tracedService(() => 200));
    firstPrometheusScrape = (await send(`${running.url}/metrics`)).body;
  });
  afterAll(async () => {
    await running?.stop();
    await receiver?.stop();
  });

  const scrape = (accept?: string) =>
    send(`${running.url}/metrics`, { headers: accept ? { accept } : {} });

  it("gives a sampled request's duration bucket its trace and server span as the exemplar, in OpenMetrics", async () => {
    const traceId = newTraceId();
    const created = await send(`${running.url}/plants`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${running.token}`,
        'content-type': 'application/json',
        traceparent: traceparent(traceId, true),
      },
      body: JSON.stringify({ id: 1, name: 'Traced' }),
    });
    expect(created.status).toBe(200);
    const serverSpan = await receiver.waitForSpan(
      (span) => span.traceId === traceId && span.kind === SERVER,
    );

    const response = await scrape(PROMETHEUS_ACCEPT);
    expect(response.headers['content-type']).toBe(OPENMETRICS_TEXT);
    const [exemplar, ...others] = exemplars(response.body).filter(({ series }) =>
      series.includes('method="POST",route="/plants",status="200"'),
    );
    expect(others).toEqual([]);
    expect(exemplar.labels).toEqual({ trace_id: traceId, span_id: serverSpan.spanId });
    const bucket = /^http_request_duration_seconds_bucket\{le="([^"]+)"/.exec(exemplar.series);
    expect(exemplar.value).toBeGreaterThan(0);
    expect(exemplar.value).toBeLessThanOrEqual(Number(bucket![1]));
    expect(Math.abs(exemplar.timestamp - Date.now() / 1000)).toBeLessThan(60);
  });

  it('gives an unsampled request none', async () => {
    const traceId = newTraceId();
    const read = await send(`${running.url}/plants/1`, {
      headers: {
        authorization: `Bearer ${running.token}`,
        traceparent: traceparent(traceId, false),
      },
    });
    expect(read.status).toBe(200);

    const text = (await scrape(PROMETHEUS_ACCEPT)).body;
    expect(text).toMatch(
      /^http_request_duration_seconds_count\{method="GET",route="\/plants\/:id",status="200"\} 1$/m,
    );
    expect(exemplars(text).filter(({ series }) => series.includes('route="/plants/:id"'))).toEqual(
      [],
    );
    expect(text).not.toContain(traceId);
  });

  it('answers a Prometheus scrape (no Accept, or text/plain) as without tracing: no exemplars, the same names', async () => {
    await scrape(PROMETHEUS_ACCEPT);
    for (const accept of [undefined, 'text/plain']) {
      const response = await scrape(accept);
      expect(response.headers['content-type']).toBe(PROMETHEUS_TEXT);
      expect(response.body).not.toMatch(/ # \{/);
      expect(response.body).not.toContain('# EOF');
      expect(families(response.body)).toEqual(families(firstPrometheusScrape));
      expect(misnamedSamples(response.body, 'prometheus')).toEqual([]);
      expect(response.body).toContain('# TYPE http_requests_total counter');
    }
  });

  it('counts no dropped spans while the collector keeps up', async () => {
    expect((await scrape()).body).toMatch(/^otel_spans_dropped_total 0$/m);
    const openMetrics = (await scrape(PROMETHEUS_ACCEPT)).body;
    expect(openMetrics).toContain('# TYPE otel_spans_dropped counter');
    expect(openMetrics).toMatch(/^otel_spans_dropped_total 0$/m);
  });
});

describeOnEmbeddedRun('GET /metrics with tracing, when the collector hangs', () => {
  const QUEUE_SIZE = 16;
  const BATCH_SIZE = 8;
  let receiver: OtlpReceiver;
  let running: ServiceOnTestDatabase;

  beforeAll(async () => {
    ({ receiver, running } = await tracedService(() => 'hang', {
      OTEL_BSP_MAX_QUEUE_SIZE: String(QUEUE_SIZE),
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: String(BATCH_SIZE),
    }));
  });
  afterAll(async () => {
    await running?.stop();
    await receiver?.stop();
  });

  it('answers every request, counts the spans dropped in otel_spans_dropped_total and warns once', async () => {
    const warnings = () =>
      running.service
        .logLines()
        .filter((line) => String(line.msg).includes('spans are being dropped'));
    const requests = 3 * QUEUE_SIZE;
    for (let i = 0; i < requests; i++) {
      expect((await send(`${running.url}/health/live`)).status).toBe(200);
    }
    await expect.poll(() => warnings().length).toBe(1);

    // One export hangs: its batch and a full queue are kept, the rest is dropped.
    const dropped = Number(
      /^otel_spans_dropped_total (\d+)$/m.exec((await send(`${running.url}/metrics`)).body)?.[1],
    );
    expect(dropped).toBeGreaterThanOrEqual(requests - BATCH_SIZE - QUEUE_SIZE);
    expect(warnings()).toEqual([expect.objectContaining({ level: 'warn', context: 'Tracing' })]);
  });
});
