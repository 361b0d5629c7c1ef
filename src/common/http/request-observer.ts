import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** The route a request matched, as declared (`/plants/:id`): never a raw path or an id. */
export function routePattern(request: FastifyRequest): string {
  return request.routeOptions.url ?? 'unmatched';
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
    reply.raw.once('close', () => {
      for (const each of observers) each.finished(request, reply);
    });
    done();
  });
}
