import { MethodNotAllowedException } from '@nestjs/common';
import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { withoutStackTrace } from '../errors/without-stack-trace.js';
import type { ErrorDetails } from '../filters/http-error.filter.js';

/**
 * The methods the app serves at this request's path, in alphabetical order, from
 * Fastify's own router (every route registered, a GET's HEAD included) and OPTIONS; none
 * for a path no route matches. OPTIONS routes do not count: `@fastify/cors` registers one
 * for every path. One lookup per method Fastify knows (nine), each linear in the path's
 * length.
 */
function methodsServedAt(fastify: FastifyInstance, url: string): string[] {
  const served = fastify.supportedMethods.filter(
    (method) => method !== 'OPTIONS' && fastify.findRoute({ method, url }) !== null,
  );
  return served.length === 0 ? [] : [...served, 'OPTIONS'].sort();
}

/**
 * What no route of the app answers, though the path is one it serves: another method
 * (no route), or an OPTIONS that CORS did not answer as a preflight (its catch-all route
 * `*`, which would answer 404).
 */
function isUnservedMethod(request: FastifyRequest): boolean {
  return request.is404 || (request.method === 'OPTIONS' && request.routeOptions.url === '*');
}

/**
 * Answers a method the app does not serve at a path it serves as RFC 9110 says: 405 with
 * `Allow` listing the path's methods, in the contract's error shape; and OPTIONS 204 with
 * `Allow` (a CORS preflight is CORS's to answer, before this). The methods come from the
 * registered routes, so every module, a generated one included, gets it with no code of
 * its own. A path no route matches is still a 404. It runs as the last request hook,
 * before any token is checked, as a method that a path lacks does not depend on who asks,
 * and after `limit` (the rate limit of the client's address, as for the public routes);
 * authenticated requests to routes that exist never reach it.
 */
export function answerUnsupportedMethods(
  fastify: FastifyInstance,
  limit: onRequestAsyncHookHandler,
): void {
  const answer: onRequestAsyncHookHandler = async function (request, reply) {
    const allowed = methodsServedAt(fastify, request.url);
    if (allowed.length === 0) return;
    await limit.call(this, request, reply);
    const allow = allowed.join(', ');
    if (request.method === 'OPTIONS') return reply.code(204).header('Allow', allow).send();
    const details: ErrorDetails = {
      message: `${request.method} is not allowed on this path: it answers ${allow}`,
      headers: { Allow: allow },
    };
    throw withoutStackTrace(() => new MethodNotAllowedException(details));
  };
  // A callback hook: for the requests it lets through, every one a route serves, an
  // async one would cost a promise and a turn of the microtask queue each.
  fastify.addHook('onRequest', function (request, reply, done) {
    if (!isUnservedMethod(request)) return done();
    // As Fastify goes on after an async hook: its next steps skip a request answered here.
    answer.call(this, request, reply).then(() => done(), done);
  });
}
