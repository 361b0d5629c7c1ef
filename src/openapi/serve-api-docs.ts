import type { INestApplication } from '@nestjs/common';
import { SwaggerModule } from '@nestjs/swagger';
import { createOpenApiDocument } from './openapi-document.js';

export const API_DOCS_PATHS = { page: '/docs', json: '/openapi.json', yaml: '/openapi.yaml' };

/**
 * Serves the document as JSON and YAML and a Swagger UI page for it, without a token.
 * Swagger UI's assets come from the installed swagger-ui-dist: the page works offline.
 */
export function serveApiDocs(app: INestApplication): void {
  SwaggerModule.setup(API_DOCS_PATHS.page, app, () => createOpenApiDocument(app), {
    jsonDocumentUrl: API_DOCS_PATHS.json,
    yamlDocumentUrl: API_DOCS_PATHS.yaml,
    customSiteTitle: 'Plant Store API',
  });
}
