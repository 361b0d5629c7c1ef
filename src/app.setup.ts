import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { configureHttp } from './common/http/http-app.js';
import { answerUnsupportedMethods } from './common/http/unsupported-methods.js';
import { serveApiDocs } from './openapi/serve-api-docs.js';
import { rateLimitHook } from './rate-limit/rate-limit-fastify-routes.js';

/**
 * Configures and initialises the app as main.ts and the e2e tests both need it. The API
 * document's routes are added after `init()`, which installs Nest's error handler: routes
 * Fastify registered before it would answer errors in Fastify's own shape. The answer to
 * unsupported methods comes last: its request hook runs after every other one (the
 * anonymous requests' queue included), and it reads the routes at each request.
 */
export async function initApp(app: NestFastifyApplication): Promise<NestFastifyApplication> {
  await configureHttp(app).init();
  serveApiDocs(app);
  answerUnsupportedMethods(app.getHttpAdapter().getInstance(), rateLimitHook(app));
  return app;
}
