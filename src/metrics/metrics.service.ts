import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { InjectDataSource } from '@nestjs/typeorm';
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import {
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  type LabelValues,
  type Metric,
  type OpenMetricsContentType,
  Registry,
  type RegistryContentType,
} from 'prom-client';
import type { DataSource } from 'typeorm';
import { observeRequests, recordedStatus, routePattern } from '../common/http/request-observer.js';
import { tracing } from '../common/tracing/tracing.js';
import { buildInfo } from '../config/build-info.js';
import { DatabaseWrites } from '../database/database-writes.js';
import { postgresPool } from '../database/postgres-pool.js';
import { tableBytes } from '../database/table-sizes.js';
import { databaseGauge } from './database-gauge.js';

export type AuthFailureReason = 'missing' | 'invalid';

type RequestLabel = 'method' | 'route' | 'status';
type ExemplarLabel = 'trace_id' | 'span_id';

/** Seconds; from a cached read to a request that hits the database time-outs. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The service's Prometheus metrics, in a registry of its own (one per application, so
 * that apps built side by side in tests do not share counters), rendered in the
 * Prometheus text format or in OpenMetrics.
 */
@Injectable()
export class MetricsService implements OnModuleInit {
  readonly registry = new Registry();

  private readonly requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'],
    registers: [this.registry],
  });

  private readonly duration = registeredIn(
    this.registry,
    // Its exemplars' label names too: prom-client types them as the metric's.
    new Histogram<RequestLabel | ExemplarLabel>({
      name: 'http_request_duration_seconds',
      help: 'Time from receiving a request to finishing its response',
      labelNames: ['method', 'route', 'status'],
      buckets: DURATION_BUCKETS,
      // The trace of a sampled request, in OpenMetrics scrapes; nothing to keep without tracing.
      enableExemplars: tracing().enabled,
      registers: [],
    }),
  );

  /** Observes a request's duration; with tracing, its trace becomes its bucket's exemplar. */
  private readonly observeDuration: (labels: LabelValues<RequestLabel>, seconds: number) => void =
    tracing().enabled
      ? (labels, seconds) => {
          // The request's server span: the response's listeners run in its context.
          const active = tracing().activeIds();
          const exemplar = active?.sampled
            ? { trace_id: active.traceId, span_id: active.spanId }
            : undefined;
          this.duration.observe({ labels, value: seconds, exemplarLabels: exemplar });
        }
      : (labels, seconds) => this.duration.observe(labels, seconds);

  private readonly inFlight = new Gauge({
    name: 'http_requests_in_flight',
    help: 'HTTP requests received and not yet answered',
    registers: [this.registry],
  });

  private readonly authFailures = new Counter({
    name: 'auth_failures_total',
    help: 'Requests refused for a missing, malformed, unknown, expired or revoked token',
    labelNames: ['reason'],
    registers: [this.registry],
  });

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    @InjectDataSource() dataSource: DataSource,
    writes: DatabaseWrites,
  ) {
    collectDefaultMetrics({ register: this.registry });
    // Joined on its labels, it tells which release each scraped replica runs.
    new Gauge({
      name: 'plant_store_build_info',
      help: 'Always 1: the version and git revision this process runs, in its labels',
      labelNames: ['version', 'revision'],
      registers: [this.registry],
    }).set(buildInfo(), 1);
    const pool = postgresPool(dataSource);
    const poolGauge = (name: string, help: string, read: (pool: Pool) => number) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        collect() {
          this.set(read(pool));
        },
      });
    poolGauge('db_pool_connections', 'Open connections in the database pool', (p) => p.totalCount);
    poolGauge('db_pool_idle_connections', 'Open connections not in use', (p) => p.idleCount);
    poolGauge(
      'db_pool_waiting_requests',
      'Queries waiting for a free connection',
      (p) => p.waitingCount,
    );
    // Every table of the application's entities, those of a module added later too.
    databaseGauge(
      this.registry,
      {
        name: 'db_table_bytes',
        help: 'Bytes a table takes on disk, its indexes and TOAST included (pg_total_relation_size)',
        labelNames: ['table'],
      },
      async () =>
        (
          await tableBytes(
            pool,
            dataSource.entityMetadatas.map(({ tableName }) => tableName),
          )
        ).map(({ table, bytes }) => ({ labels: { table }, value: bytes })),
    );
    new Gauge({
      name: 'db_accepts_writes',
      help: '1 while the database takes writes; 0 from a write refused by a read-only server until a write succeeds',
      registers: [this.registry],
      collect() {
        this.set(writes.acceptsWrites ? 1 : 0);
      },
    });
    if (tracing().enabled) {
      new Counter({
        name: 'otel_spans_dropped_total',
        help: 'Spans dropped because the export queue was full (the collector is slow or down)',
        registers: [this.registry],
        collect() {
          // The tracing counts them; this shows its count.
          this.reset();
          this.inc(tracing().droppedSpans());
        },
      });
    }
  }

  onModuleInit(): void {
    observeRequests(this.adapterHost.httpAdapter.getInstance<FastifyInstance>(), {
      started: () => this.inFlight.inc(),
      finished: (request, reply) => {
        this.inFlight.dec();
        const labels = {
          method: request.method,
          route: routePattern(request),
          status: String(recordedStatus(reply)),
        };
        this.requests.inc(labels);
        this.observeDuration(labels, reply.elapsedTime / 1000);
      },
    });
  }

  recordAuthFailure(reason: AuthFailureReason): void {
    this.authFailures.inc({ reason });
  }

  /** The metrics in the format of `contentType`: the Prometheus text format or OpenMetrics. */
  render(contentType: RegistryContentType): Promise<string> {
    return contentType === Registry.OPENMETRICS_CONTENT_TYPE
      ? this.renderOpenMetrics()
      : this.registry.metrics();
  }

  /**
   * The metrics rendered by an OpenMetrics registry made for this scrape: switching the
   * shared one's format would race with concurrent scrapes (prom-client reads it between
   * awaits). It holds the metrics themselves but stand-ins for the counters, since its
   * rendering strips `_total` off the name of each counter it holds.
   */
  private renderOpenMetrics(): Promise<string> {
    // Set after: prom-client's typings lack the constructor's format argument.
    const scrape = new Registry<OpenMetricsContentType>();
    scrape.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    // Typed as plain objects by prom-client, these are the metrics themselves.
    for (const metric of this.registry.getMetricsAsArray() as unknown as Metric[]) {
      scrape.registerMetric(metric instanceof Counter ? renamableStandIn(metric) : metric);
    }
    return scrape.metrics();
  }
}

/**
 * Registers `metric` in `registry`. prom-client refuses a metric with exemplars in a
 * Prometheus registry at construction, though it renders it there as it does one without
 * (exemplars are OpenMetrics only).
 */
function registeredIn<T extends Metric>(registry: Registry, metric: T): T {
  registry.registerMetric(metric);
  return metric;
}

/**
 * A counter whose name prom-client's OpenMetrics rendering may strip of `_total` (it
 * writes the family name, and adds `_total` back to the samples), where done to the
 * counter itself it would stay, and break every Prometheus scrape after it.
 */
function renamableStandIn(counter: Counter): Counter {
  const standIn = {
    name: (counter as unknown as { name: string }).name,
    type: 'counter',
    get: async () => ({ ...(await counter.get()), name: standIn.name }),
  };
  return standIn as unknown as Counter;
}
