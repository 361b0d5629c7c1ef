import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { InjectDataSource } from '@nestjs/typeorm';
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import { observeRequests, recordedStatus, routePattern } from '../common/http/request-observer.js';
import { postgresPool } from '../database/postgres-pool.js';

export type AuthFailureReason = 'missing' | 'invalid';

/** Seconds; from a cached read to a request that hits the database time-outs. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The service's Prometheus metrics, in a registry of its own (one per application, so
 * that apps built side by side in tests do not share counters).
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

  private readonly duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from receiving a request to finishing its response',
    labelNames: ['method', 'route', 'status'],
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

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
  ) {
    collectDefaultMetrics({ register: this.registry });
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
        this.duration.observe(labels, reply.elapsedTime / 1000);
      },
    });
  }

  recordAuthFailure(reason: AuthFailureReason): void {
    this.authFailures.inc({ reason });
  }
}
