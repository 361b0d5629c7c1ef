import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import type { onRequestAsyncHookHandler } from 'fastify';
import { RateLimitGuard } from './rate-limit.guard.js';

/** What a guard reads as the "controller" of a route Fastify serves itself: it has no metadata. */
class FastifyRoute {}

/**
 * The rate limit as a Fastify request hook, for what Fastify answers itself and Nest's
 * guards never see: the same guard runs, so the request shares the budget of its client
 * address (no token is verified there), its storage, and the 429 (thrown to Nest's error
 * handler, hence the contract's error shape).
 */
export function rateLimitHook(app: NestFastifyApplication): onRequestAsyncHookHandler {
  const guard = app.get(RateLimitGuard);
  const limit: onRequestAsyncHookHandler = async (request, reply) => {
    await guard.canActivate(new ExecutionContextHost([request, reply], FastifyRoute, limit));
  };
  return limit;
}

/**
 * Rate limits the routes registered straight in Fastify from now on whose URL `limits`
 * names (SwaggerModule.setup's, say), with `rateLimitHook` before each.
 */
export function rateLimitFastifyRoutes(
  app: NestFastifyApplication,
  limits: (url: string) => boolean,
): void {
  const limit = rateLimitHook(app);
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRoute', (route) => {
      if (limits(route.url)) route.onRequest = [route.onRequest ?? [], limit].flat();
    });
}
