import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { configureHttp } from './common/http/http-app.js';
import { serveApiDocs } from './openapi/serve-api-docs.js';

/**
 * Configures and initialises the app as main.ts and the e2e tests both need it. The API
 * document's routes are added after `init()`, which installs Nest's error handler: routes
 * Fastify registered before it would answer errors in Fastify's own shape.
 */
export async function initApp(app: NestFastifyApplication): Promise<NestFastifyApplication> {
  await configureHttp(app).init();
  serveApiDocs(app);
  return app;
}
