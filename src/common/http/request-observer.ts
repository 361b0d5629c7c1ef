import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { tracing } from '../tracing/tracing.js';

/** The route a request matched, as declared (`/plants/:id`): never a raw path or an id. */
export function routePattern(request: FastifyRequest): string {
  return request.routeOptions.url ?? 'unmatched';
}

/**
 * nginx's "client closed request": the status recorded, never sent, for a request whose
 * connection closed before the service had answered it. The status set by then (200
 * while a handler still works) was never received by anyone.
 */
export const CLIENT_CLOSED_REQUEST = 499;

/**
 * The status to record for a request once it is finished: the one answered, or 499.
 * Answered means the whole response was handed to Node (`writableEnded`); whether its
 * last bytes reached a client that hung up meanwhile is not this service's to know (and
 * an injected request, in the tests, never flushes to a socket at all).
 */
export function recordedStatus(reply: FastifyReply): number {
  return reply.raw.writableEnded ? reply.statusCode : CLIENT_CLOSED_REQUEST;
}

export interface RequestObserver {
  /** A request arrived (routed, nothing read or checked yet). */
  started?(request: FastifyRequest): void;
  /** Its response was sent, or the client went away first; called once per request. */
  finished(request: FastifyRequest, reply: FastifyReply): void;
}

/** Per server, the observers its one request hook calls. */
const observersByServer = new WeakMap<FastifyInstance, RequestObserver[]>();

/**
 * Watches every request the server routes, 404s and errors included. The socket's
 * `close` fires exactly once whether the response finished or the client aborted,
 * which Fastify's `onResponse` hook does not promise. However many observers there
 * are, a request gets one hook call and one listener: this runs for every request.
 */
export function observeRequests(fastify: FastifyInstance, observer: RequestObserver): void {
  const known = observersByServer.get(fastify);
  if (known) {
    known.push(observer);
    return;
  }
  const observers = [observer];
  observersByServer.set(fastify, observers);
  fastify.addHook('onRequest', (request, reply, done) => {
    for (const each of observers) each.started?.(request);
    // In the request's context (its trace), as the socket's events are not.
    reply.raw.once(
      'close',
      tracing().bindToActive(() => {
        for (const each of observers) each.finished(request, reply);
      }),
    );
    done();
  });
}
