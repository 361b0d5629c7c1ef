import { AsyncResource } from 'node:async_hooks';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { Gauge } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service.js';
import type { ApiToken } from './entities/api-token.entity.js';
import { hashTokenSecret } from './token-secret.js';
import { VerifiedTokenCache } from './verified-token-cache.js';

/**
 * Anonymous requests let through per event-loop turn. Each turn also serves, first, every
 * request whose token was verified lately and every database answer that came in; the
 * anonymous ones then cost that turn a few milliseconds at most, however many wait.
 */
const ANONYMOUS_PER_TURN = 16;

/**
 * Requests with a recently verified bearer token are handled as soon as they arrive;
 * all others (no token, an unknown one, probes, documents) wait in this queue, first in
 * first out, and go on a batch per event-loop turn. Without it, a flood of anonymous
 * requests fills every turn: a client at work waits for hundreds of them at each step
 * (its request, then its query's answer), as long as the flood lasts. With it, the turns
 * stay short and the flood gets what the clients leave. It decides only the order:
 * every request is then authenticated by the bearer guard as before.
 */
@Injectable()
export class AnonymousRequestQueue implements OnModuleInit {
  /** Each waiting request's go-ahead, oldest first from `head` on. */
  private waiting: (() => void)[] = [];
  private head = 0;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly verified: VerifiedTokenCache<ApiToken>,
    metrics: MetricsService,
  ) {
    const gauge: Gauge = new Gauge({
      name: 'http_anonymous_requests_waiting',
      help: 'Requests without a recently verified token waiting for their turn',
      registers: [metrics.registry],
      collect: (): void => gauge.set(this.waiting.length - this.head),
    });
  }

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    fastify.addHook('onRequest', (request, reply, done) => {
      const token = bearerToken(request.headers.authorization);
      // A cheap first look, from memory, never a substitute for authentication.
      if (token !== undefined && this.verified.holds(hashTokenSecret(token))) return done();
      // The first to wait starts the draining, which goes on while any are left. Each
      // go-ahead keeps its own request's context (its trace): the drain runs in the first's.
      if (this.waiting.push(AsyncResource.bind(done)) === 1) setImmediate(this.drain);
    });
  }

  private readonly drain = (): void => {
    const end = Math.min(this.head + ANONYMOUS_PER_TURN, this.waiting.length);
    const batch = this.waiting.slice(this.head, end);
    this.head = end;
    if (this.head === this.waiting.length) {
      this.waiting = [];
      this.head = 0;
    } else {
      setImmediate(this.drain);
    }
    for (const done of batch) done();
  };
}

/** The token of an `Authorization: Bearer <token>` header, as passport-http-bearer reads it. */
function bearerToken(authorization: string | undefined): string | undefined {
  if (authorization === undefined || authorization.indexOf(' ') !== 6) return undefined;
  return authorization.slice(0, 6).toLowerCase() === 'bearer' ? authorization.slice(7) : undefined;
}
