import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  exemplars,
  families,
  misnamedSamples,
  OPENMETRICS_TEXT,
  PROMETHEUS_ACCEPT,
  PROMETHEUS_TEXT,
} from '../support/metrics-text.js';
import { CHECKOUT_REVISION, PACKAGE_VERSION } from '../support/release.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

describe('GET /metrics', () => {
  let api: TestApp;
  let metrics: string;
  let contentType: string;

  beforeAll(async () => {
    api = await createTestApp();
    const token = await api.issueToken();
    const create = (authorization?: string, id = 1) =>
      api.request({
        method: 'POST',
        url: '/plants',
        headers: {
          'content-type': 'application/json',
          ...(authorization ? { authorization } : {}),
        },
        payload: JSON.stringify({ id, name: 'Counted' }),
      });
    await create(`Bearer ${token}`, 1);
    await create(`Bearer ${token}`, 2);
    await create();
    await create('Bearer nonsense');
    await api.request({ method: 'GET', url: '/no/such/route/9876543210' });
    const response = await api.request({ method: 'GET', url: '/metrics' });
    expect(response.statusCode).toBe(200);
    metrics = response.body;
    contentType = String(response.headers['content-type']);
  });
  afterAll(() => api.close());

  const sample = (name: string) =>
    new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} (\\S+)$`, 'm').exec(metrics)?.[1];

  const scrape = (accept?: string) =>
    api.request({ method: 'GET', url: '/metrics', headers: accept ? { accept } : {} });

  it('answers Prometheus text without a token', () => {
    expect(contentType).toBe(PROMETHEUS_TEXT);
    expect(metrics).toContain('# TYPE http_requests_total counter');
  });

  it('counts requests by method, route pattern and status', () => {
    expect(sample('http_requests_total{method="POST",route="/plants",status="200"}')).toBe('2');
    expect(sample('http_requests_total{method="POST",route="/plants",status="401"}')).toBe('2');
    expect(sample('http_requests_total{method="GET",route="unmatched",status="404"}')).toBe('1');
  });

  it('never labels with a raw path or an id', () => {
    expect(metrics).not.toContain('9876543210');
  });

  it('has a duration histogram by route and status', () => {
    expect(metrics).toContain('# TYPE http_request_duration_seconds histogram');
    expect(
      sample('http_request_duration_seconds_count{method="POST",route="/plants",status="200"}'),
    ).toBe('2');
    expect(
      sample(
        'http_request_duration_seconds_bucket{le="+Inf",method="POST",route="/plants",status="200"}',
      ),
    ).toBe('2');
  });

  it('shows the requests in flight: the scrape itself', () => {
    expect(sample('http_requests_in_flight')).toBe('1');
  });

  it('shows the anonymous requests waiting for their turn: none, the scrape went on', () => {
    expect(sample('http_anonymous_requests_waiting')).toBe('0');
  });

  it('counts token-auth failures by reason', () => {
    expect(sample('auth_failures_total{reason="missing"}')).toBe('1');
    expect(sample('auth_failures_total{reason="invalid"}')).toBe('1');
  });

  it('shows the database pool', () => {
    expect(Number(sample('db_pool_connections'))).toBeGreaterThanOrEqual(1);
    expect(Number(sample('db_pool_idle_connections'))).toBeGreaterThanOrEqual(0);
    expect(sample('db_pool_waiting_requests')).toBe('0');
  });

  it('includes the process metrics', () => {
    expect(Number(sample('process_cpu_user_seconds_total'))).toBeGreaterThan(0);
    expect(Number(sample('process_resident_memory_bytes'))).toBeGreaterThan(0);
    expect(metrics).toMatch(/^nodejs_eventloop_lag_seconds /m);
  });

  it('names the release it runs: plant_store_build_info, always 1', () => {
    expect(metrics).toContain('# TYPE plant_store_build_info gauge');
    const [, version, revision] =
      /^plant_store_build_info\{version="([^"]*)",revision="([^"]*)"\} 1$/m.exec(metrics) ?? [];
    expect(version).toBe(PACKAGE_VERSION);
    expect(revision).toMatch(CHECKOUT_REVISION);
  });

  it('has no tracing metric without tracing', () => {
    expect(metrics).not.toContain('otel_spans_dropped');
  });

  describe('in OpenMetrics, for a scraper that prefers it (Prometheus)', () => {
    it('answers OpenMetrics, without exemplars since nothing is traced', async () => {
      const response = await scrape(PROMETHEUS_ACCEPT);
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toBe(OPENMETRICS_TEXT);
      expect(response.headers.vary).toMatch(/\bAccept\b/);
      const text = response.body;
      expect(text).toContain('# TYPE http_requests counter');
      expect(text).toMatch(
        /^http_requests_total\{method="POST",route="\/plants",status="200"\} 2$/m,
      );
      expect(text).toContain('# TYPE http_request_duration_seconds histogram');
      expect(text.endsWith('\n# EOF\n')).toBe(true);
      expect(misnamedSamples(text, 'openmetrics')).toEqual([]);
      expect(exemplars(text)).toEqual([]);
      expect(text).not.toContain('otel_spans_dropped');
    });

    it('leaves the Prometheus text as it was', async () => {
      await scrape(PROMETHEUS_ACCEPT);
      const after = await scrape();
      expect(after.headers['content-type']).toBe(PROMETHEUS_TEXT);
      expect(after.headers.vary).toMatch(/\bAccept\b/);
      expect(families(after.body)).toEqual(families(metrics));
      expect(misnamedSamples(after.body, 'prometheus')).toEqual([]);
      expect(after.body).toMatch(
        /^http_requests_total\{method="POST",route="\/plants",status="200"\} 2$/m,
      );
    });

    it('answers scrapes of both formats at once each in its own', async () => {
      const openMetricsFamilies = families((await scrape(PROMETHEUS_ACCEPT)).body);
      const accepts = Array.from({ length: 16 }, (_, i) =>
        i % 2 === 0 ? PROMETHEUS_ACCEPT : 'text/plain',
      );
      const responses = await Promise.all(accepts.map(scrape));
      for (const [i, { headers, body }] of responses.entries()) {
        if (accepts[i] === PROMETHEUS_ACCEPT) {
          expect(headers['content-type']).toBe(OPENMETRICS_TEXT);
          expect(families(body)).toEqual(openMetricsFamilies);
          expect(misnamedSamples(body, 'openmetrics')).toEqual([]);
          expect(body.endsWith('\n# EOF\n')).toBe(true);
        } else {
          expect(headers['content-type']).toBe(PROMETHEUS_TEXT);
          expect(families(body)).toEqual(families(metrics));
          expect(misnamedSamples(body, 'prometheus')).toEqual([]);
          expect(body).not.toContain('# EOF');
        }
      }
    });
  });
});
