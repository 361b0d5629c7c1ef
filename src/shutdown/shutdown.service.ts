import type { Server } from 'node:http';
import { Server as NetServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type BeforeApplicationShutdown,
  Injectable,
  Logger,
  type OnModuleInit,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { AppConfig } from '../config/app-config.js';
import { acceptQueueDrained, eventLoopTurns } from './event-loop-turns.js';

const DRAIN_TIMEOUTS = {
  /**
   * Before the listener closes, and again before idle connections are closed: time for
   * clients connecting as the signal came to be taken in, and for requests on the way
   * over keep-alive connections to arrive.
   */
  settleMs: 250,
  /** Requests in flight get this long to finish; then their connections are cut. */
  requestsMs: 10_000,
} as const;

/**
 * Drains the HTTP server before Nest closes it (and, after that, the database pool and
 * the embedded PostgreSQL): every response from now on carries `Connection: close` and
 * readiness answers 503; after SHUTDOWN_DELAY_MS, time for a load balancer to notice,
 * the connections the kernel accepted are taken in, no new one is accepted, and every
 * request received is answered, within a bound: none is reset.
 */
@Injectable()
export class ShutdownService implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger('Shutdown');
  private draining = false;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly config: AppConfig,
  ) {}

  /** From the shutdown's start: readiness fails so that balancers stop sending requests. */
  get isDraining(): boolean {
    return this.draining;
  }

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    fastify.addHook('onSend', (_request, reply, payload, done) => {
      if (this.draining) reply.header('connection', 'close');
      done(null, payload);
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    const server = this.adapterHost.httpAdapter.getHttpServer() as Server;
    if (!server.listening) return;
    this.draining = true;
    await sleep(this.config.shutdownDelayMs + DRAIN_TIMEOUTS.settleMs);
    await acceptQueueDrained(server);
    // http.Server#close would also close every connection without a request in
    // progress, including those accepted a moment ago and not read yet; net's close
    // only stops accepting, and calls back once the last connection has ended.
    const ended = new Promise<void>((resolve) =>
      NetServer.prototype.close.call(server, () => resolve()),
    );
    await sleep(DRAIN_TIMEOUTS.settleMs);
    // A keep-alive connection between requests is idle to Node even when its next request
    // is in its socket already, unread: closing it then resets that request. Those bytes
    // are read at the loop's next I/O phase, however late a busy loop ran the timer above;
    // after two turns, an idle connection has sent nothing.
    await eventLoopTurns(2);
    server.closeIdleConnections();
    const timedOut = await Promise.race([
      ended.then(() => false),
      sleep(DRAIN_TIMEOUTS.requestsMs, true, { ref: false }),
    ]);
    if (timedOut) {
      this.logger.warn(
        `requests still running after ${DRAIN_TIMEOUTS.requestsMs} ms; closing their connections`,
      );
      server.closeAllConnections();
      await ended;
    }
  }
}
