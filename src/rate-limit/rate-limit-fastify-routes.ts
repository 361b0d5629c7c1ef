import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import type { onRequestHookHandler } from 'fastify';
import { RateLimitGuard } from './rate-limit.guard.js';

/** What a guard reads as the "controller" of a route Fastify serves itself: it has no metadata. */
class FastifyRoute {}

/**
 * Rate limits the routes registered straight in Fastify from now on whose URL `limits`
 * names (SwaggerModule.setup's, say), which Nest's guards never see: the same guard runs
 * before each, so they share the budget of their client address, its storage, and the
 * 429 (thrown to Nest's error handler, hence the contract's error shape).
 */
export function rateLimitFastifyRoutes(
  app: NestFastifyApplication,
  limits: (url: string) => boolean,
): void {
  const guard = app.get(RateLimitGuard);
  const limit: onRequestHookHandler = async (request, reply) => {
    await guard.canActivate(new ExecutionContextHost([request, reply], FastifyRoute, limit));
  };
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRoute', (route) => {
      if (limits(route.url)) route.onRequest = [route.onRequest ?? [], limit].flat();
    });
}
