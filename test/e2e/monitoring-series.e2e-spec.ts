import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  freePort,
  send,
  startServiceOnTestDatabase,
  type ServiceOnTestDatabase,
} from '../support/built-service.js';
import {
  alerts,
  dashboardQueries,
  recordedSeries,
  rules,
  selectedSeries,
} from '../support/monitoring.js';

/** Prometheus's own series for each target it scrapes. */
const PROMETHEUS_SERIES = ['up'];
/**
 * Every series deploy/monitoring's rules and dashboard read is one the service serves (its
 * /metrics, tracing on, so that its tracing series are there too) or one the rules record.
 */
describe('the series the alert rules and the dashboard read', () => {
  let started: ServiceOnTestDatabase;
  let served: Set<string>;

  beforeAll(async () => {
    started = await startServiceOnTestDatabase({
      // Tracing on, to a collector that is not there: its series are served too.
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${await freePort()}`,
      REDIS_URL: '',
    });
    // A request of each kind the rules and the dashboard count (a create, one refused for its
    // missing token), so that every labelled series exists.
    await send(`${started.url}/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${started.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: 1, name: 'Fern' }),
    });
    await send(`${started.url}/plants/1`);
    const { status, body } = await send(`${started.url}/metrics`);
    expect(status).toBe(200);
    served = new Set(
      body
        .split('\n')
        .filter((line) => line !== '' && !line.startsWith('#'))
        .map((line) => /^[^{ ]+/.exec(line)![0]),
    );
  });
  afterAll(() => started?.stop());

  const known = () => new Set([...served, ...recordedSeries(), ...PROMETHEUS_SERIES]);

  it('the service serves what the alerts are about: its readiness, the delivery latency, the failing subscriptions, the dropped spans, the retention sweep', () => {
    for (const name of [
      'retention_rows_removed_total',
      'retention_sweep_last_success_timestamp_seconds',
      'db_table_bytes',
      'health_ready',
      'webhook_delivery_latency_seconds_bucket',
      'webhook_subscription_failing_seconds',
      'otel_spans_dropped_total',
      'db_accepts_writes',
      'rate_limit_store',
    ])
      expect(served).toContain(name);
  });

  it('a scrape while a table is held exclusively (a migration, a restore) answers at once, with the sizes read before', async () => {
    const sizes = (body: string) =>
      body.split('\n').filter((line) => line.startsWith('db_table_bytes{'));
    const before = sizes((await send(`${started.url}/metrics`)).body);
    expect(before.length).toBeGreaterThan(0);
    const locker = new pg.Client({ connectionString: started.database.adminUrl });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE plants IN ACCESS EXCLUSIVE MODE');
      // Past the sizes' 5 s cache, so that this scrape reads them again.
      await new Promise((resolve) => setTimeout(resolve, 5_100));
      const startedAt = performance.now();
      const { status, body } = await send(`${started.url}/metrics`);
      expect(status).toBe(200);
      expect(performance.now() - startedAt).toBeLessThan(1_000);
      expect(sizes(body)).toEqual(before);
    } finally {
      await locker.query('COMMIT');
      await locker.end();
    }
  }, 20_000);

  it('every rule reads series the service serves or the rules record', () => {
    const unknown = rules().flatMap(({ record, alert, expr }) =>
      selectedSeries(expr)
        .filter((name) => !known().has(name))
        .map((name) => `${record ?? alert}: ${name}`),
    );
    expect(unknown).toEqual([]);
    expect(alerts().length).toBeGreaterThan(0);
  });

  it('every dashboard query reads series the service serves or the rules record', () => {
    const unknown = dashboardQueries().flatMap((expr) =>
      selectedSeries(expr).filter((name) => !known().has(name)),
    );
    expect(unknown).toEqual([]);
  });
});
