import type { Socket } from 'node:net';
import type { NestApplicationOptions } from '@nestjs/common';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger } from 'nestjs-pino';
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

/**
 * What Node's HTTP parser refuses before there is a request for Fastify or Nest to
 * handle: by error code, the status and the message of the answer.
 */
const CLIENT_ERRORS: Record<string, { status: number; reason: string; message: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    reason: 'Request Timeout',
    message: 'the request took too long to arrive',
  },
  HPE_HEADER_OVERFLOW: {
    status: 431,
    reason: 'Request Header Fields Too Large',
    message: 'the request headers are too large',
  },
};
const MALFORMED_REQUEST = {
  status: 400,
  reason: 'Bad Request',
  message: 'the request is not valid HTTP',
};

/**
 * Answers a request Node could not parse, or that timed out, in the contract's error
 * shape (Fastify's own answer is `{"error":"Bad Request","statusCode":400,…}`), then
 * closes the connection.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const { status, reason, message } = CLIENT_ERRORS[error.code ?? ''] ?? MALFORMED_REQUEST;
  const body = stringifyJson({ error: status, message });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/** What Fastify's router refuses before routing: a malformed URL, a too long parameter. */
const ROUTER_ERRORS: Record<string, string> = {
  FST_ERR_BAD_URL: 'the URL is not valid: a percent-encoded part of it does not decode',
  FST_ERR_MAX_PARAM_LENGTH: 'a path parameter is too long',
};

/**
 * Answers a URL the router cannot take with 400 in the contract's error shape (Fastify's
 * own answer leaks its error code, and is a 414 for a long parameter, which no route
 * documents: an id longer than 100 characters is no id).
 */
function answerRouterError(error: FastifyError, _request: FastifyRequest, reply: FastifyReply) {
  const body = { error: 400, message: ROUTER_ERRORS[error.code] ?? 'the request is not valid' };
  void reply.code(400).type('application/json; charset=utf-8').send(body);
}

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
    async (_request: unknown, body: Buffer) => parseJsonBody(body),
  );
  fastify.setReplySerializer((payload) => stringifyJson(payload));
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
  return app;
}
