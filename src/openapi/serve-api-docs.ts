import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { SwaggerModule } from '@nestjs/swagger';
import { rateLimitFastifyRoutes } from '../rate-limit/rate-limit-fastify-routes.js';
import { createOpenApiDocument } from './openapi-document.js';

export const API_DOCS_PATHS = { page: '/docs', json: '/openapi.json', yaml: '/openapi.yaml' };

/**
 * Serves the document as JSON and YAML and a Swagger UI page for it, without a token
 * but rate limited per client address like every public route. Swagger UI's assets come
 * from the installed swagger-ui-dist: the page works offline.
 */
export function serveApiDocs(app: NestFastifyApplication): void {
  // SwaggerModule.setup registers its routes in Fastify, out of reach of Nest's guards.
  rateLimitFastifyRoutes(app, (url) =>
    Object.values(API_DOCS_PATHS).some((path) => url.startsWith(path)),
  );
  SwaggerModule.setup(API_DOCS_PATHS.page, app, () => createOpenApiDocument(app), {
    jsonDocumentUrl: API_DOCS_PATHS.json,
    yamlDocumentUrl: API_DOCS_PATHS.yaml,
    customSiteTitle: 'Plant Store API',
  });
}
