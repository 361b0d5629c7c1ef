import type { NestApplicationOptions } from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { parseJsonBody, stringifyJson } from '../json/json-codec.js';

/** A plant is well under 2 KiB; anything much larger is refused (413) while it streams in. */
export const BODY_LIMIT_BYTES = 64 * 1024;

/** Options for `NestFactory.create` and `createNestApplication`: the JSON codec is ours. */
export const HTTP_APP_OPTIONS: NestApplicationOptions = { bodyParser: false };

export function createHttpAdapter(): FastifyAdapter {
  return new FastifyAdapter({ bodyLimit: BODY_LIMIT_BYTES });
}

/**
 * The HTTP settings production and the e2e tests share, so that a test app behaves
 * exactly like the service: JSON only (other media types are 415), parsed and written
 * without losing int64 precision.
 */
export function configureHttp(app: NestFastifyApplication): NestFastifyApplication {
  const fastify = app.getHttpAdapter().getInstance();
  fastify.removeAllContentTypeParsers();
  app.useBodyParser(
    'application/json',
    { bodyLimit: BODY_LIMIT_BYTES },
    async (_request: unknown, body: Buffer) => parseJsonBody(body),
  );
  fastify.setReplySerializer((payload) => stringifyJson(payload));
  return app;
}
