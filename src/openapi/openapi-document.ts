import type { INestApplication } from '@nestjs/common';
import { type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { NEW_PLANT_WEBHOOKS } from '../webhooks/new-plant.webhook.js';

/**
 * The server a client of the served document (the /docs page's "Try it out", a tool that
 * fetched /openapi.json) calls: `/`, the root of the origin it got the document from, as
 * OpenAPI resolves a relative server URL. Behind a reverse proxy that is the proxy's origin,
 * whatever its X-Forwarded-* say; like the `Link` headers, it expects the service at the
 * root of its origin. The seed's templated server (`http://localhost:3000` by default)
 * follows, for a document read from a file.
 */
const SERVED_ORIGIN = { url: '/', description: 'The origin that serves this document' };
const SEED_SERVER = {
  url: '{base_url}',
  variables: { base_url: { default: 'http://localhost:3000' } },
};

/**
 * What the code cannot say about itself: the seed's info and security, the servers, and
 * the webhooks the service sends (their requests are no route of its own).
 */
const DOCUMENT_HEAD: Omit<OpenAPIObject, 'paths'> = {
  openapi: '3.1.0',
  info: {
    title: 'Plant Store',
    version: '1.0.0',
    description:
      'The OpenAPI Plant Store sample as a service. Ids are signed 64-bit integers, written in JSON without losing a digit. Every error is an Error.',
  },
  servers: [SERVED_ORIGIN, SEED_SERVER],
  security: [{ bearerAuth: [] }],
  components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
  webhooks: NEW_PLANT_WEBHOOKS,
};

/** The service's OpenAPI 3.1 document, generated from the controllers' decorators. */
export function createOpenApiDocument(app: INestApplication): OpenAPIObject {
  return completeOpenApi31(SwaggerModule.createDocument(app, DOCUMENT_HEAD));
}

/**
 * The one correction to the generated document: @nestjs/swagger writes OpenAPI 3.1 and
 * int64 as the seed does, but its types know only 3.0's License Object, without the SPDX
 * `identifier` the seed's license has.
 */
export function completeOpenApi31(generated: OpenAPIObject): OpenAPIObject {
  const license = { name: 'MIT', identifier: 'MIT' };
  return { ...generated, info: { ...generated.info, license } };
}
