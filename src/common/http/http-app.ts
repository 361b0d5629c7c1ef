import { type NestApplicationOptions, UnsupportedMediaTypeException } from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';
import { Logger } from 'nestjs-pino';
import { answerClientError, answerRouterError } from '../filters/client-error.handler.js';
import { parseJsonBody, stringifyJson } from '../json/json-codec.js';
import { REQUEST_ID_HEADER, requestIdFor } from './request-id.js';

/** A plant is well under 2 KiB; anything much larger is refused (413) while it streams in. */
export const BODY_LIMIT_BYTES = 64 * 1024;

/**
 * Bounds on slow or idle clients. Node checks the header and request time-outs only
 * every `connectionsCheckingInterval` (30 s unless set), so that is set too.
 */
const HTTP_TIMEOUTS = {
  /** From the first byte of a request to the end of its headers (slowloris). */
  headersMs: 10_000,
  /** From the first byte of a request to the end of its body (slow bodies). */
  requestMs: 30_000,
  /** An idle keep-alive connection is closed after this. */
  keepAliveMs: 5_000,
  /** A socket on which nothing moves (a client that stops reading) is closed after this. */
  socketIdleMs: 60_000,
  checkIntervalMs: 1_000,
} as const;

/** Options for `NestFactory.create` and `createNestApplication`: the JSON codec is ours. */
export const HTTP_APP_OPTIONS: NestApplicationOptions = { bodyParser: false, bufferLogs: true };

export function createHttpAdapter(): FastifyAdapter {
  return new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: requestIdFor,
    // Fastify's own 503 during close() is not in the contract's error shape; the
    // shutdown drains instead (see src/shutdown).
    return503OnClosing: false,
    requestTimeout: HTTP_TIMEOUTS.requestMs,
    keepAliveTimeout: HTTP_TIMEOUTS.keepAliveMs,
    connectionTimeout: HTTP_TIMEOUTS.socketIdleMs,
    clientErrorHandler: answerClientError,
    frameworkErrors: answerRouterError,
    http: {
      headersTimeout: HTTP_TIMEOUTS.headersMs,
      connectionsCheckingInterval: HTTP_TIMEOUTS.checkIntervalMs,
    },
  });
}

/**
 * The settings production and the e2e tests share, so that a test app behaves exactly
 * like the service: JSON only (other media types are 415), parsed and written without
 * losing int64 precision; structured logs; security headers; the request id echoed.
 */
export function configureHttp(app: NestFastifyApplication): NestFastifyApplication {
  app.useLogger(app.get(Logger));
  app.useSecurityHeaders();
  const fastify = app.getHttpAdapter().getInstance();
  fastify.removeAllContentTypeParsers();
  app.useBodyParser(
    'application/json',
    { bodyLimit: BODY_LIMIT_BYTES },
    async (request: FastifyRequest, body: Buffer) => {
      const encoding = request.headers['content-encoding'];
      if (encoding !== undefined && encoding.toLowerCase() !== 'identity') {
        throw new UnsupportedMediaTypeException(
          `Content-Encoding ${encoding} is not supported: send the body uncompressed`,
        );
      }
      return parseJsonBody(body);
    },
  );
  fastify.setReplySerializer((payload) => stringifyJson(payload));
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
  return app;
}
