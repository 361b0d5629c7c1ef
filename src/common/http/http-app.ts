import { type NestApplicationOptions, UnsupportedMediaTypeException } from '@nestjs/common';
import { resolveSecurityHeaders } from '@nestjs/core/security/security-headers.js';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';
import { Logger } from 'nestjs-pino';
import { AppConfig } from '../../config/app-config.js';
import { answerClientError, answerRouterError } from '../filters/client-error.handler.js';
import { parseJsonBody, stringifyJson } from '../json/json-codec.js';
import { tracing } from '../tracing/tracing.js';
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

/** The body of every PATCH, and of nothing else: a JSON Merge Patch (RFC 7396). */
export const MERGE_PATCH_MEDIA_TYPE = 'application/merge-patch+json';

/**
 * helmet's defaults, as Nest's `app.useSecurityHeaders()` resolves and validates them,
 * less five headers that protect nothing a JSON API serves (OWASP's REST Security Cheat
 * Sheet lists what an API answer needs): two for HTML pages (Origin-Agent-Cluster,
 * X-DNS-Prefetch-Control; the docs page loads nothing they govern), and three for clients
 * long gone (X-Download-Options for Internet Explorer 8, X-Permitted-Cross-Domain-Policies
 * for Flash, X-XSS-Protection for XSS auditors no browser ships).
 *
 * They go on Fastify's reply, with the request id, rather than through
 * `app.useSecurityHeaders()`, whose hook sets each on Node's response: once one header is
 * set there, Node writes every header of the answer through `setHeader` (writeHead's slow
 * path): a lone create's CPU went from 1.06x the bare stack's to 1.02x (docs/performance.md).
 */
const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.fromEntries(
  resolveSecurityHeaders({
    originAgentCluster: false,
    xDnsPrefetchControl: false,
    xDownloadOptions: false,
    xPermittedCrossDomainPolicies: false,
    xXssProtection: false,
  }).headers,
);

/** Options for `NestFactory.create` and `createNestApplication`: the JSON codec is ours. */
export const HTTP_APP_OPTIONS: NestApplicationOptions = { bodyParser: false, bufferLogs: true };

/**
 * The headers a browser page on an allowed origin (CORS_ORIGINS) may send and read: a
 * token, a JSON body, a request id; the next page's `Link`, the rate limit's answers.
 */
const CORS_HEADERS = {
  allowed: ['Authorization', 'Content-Type', REQUEST_ID_HEADER],
  exposed: [
    'Link',
    'Retry-After',
    'X-RateLimit-Limit',
    'X-RateLimit-Remaining',
    'X-RateLimit-Reset',
    REQUEST_ID_HEADER,
  ],
} as const;
/** How long a browser may reuse a preflight's answer, in seconds. */
const CORS_PREFLIGHT_MAX_AGE_S = 600;

export function createHttpAdapter({
  trustedProxies,
}: Pick<AppConfig, 'trustedProxies'>): FastifyAdapter {
  return new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    // `request.ip`, read by the request log and the rate limit, is then the address a
    // trusted proxy forwarded in X-Forwarded-For; anyone else's X-Forwarded-For is ignored.
    trustProxy: trustedProxies.length > 0 ? trustedProxies : false,
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
 * like the service: JSON only (JSON Merge Patch for PATCH; other media types are 415), parsed and written without
 * losing int64 precision; structured logs; security headers and the request id on every
 * answer the router reaches.
 */
export function configureHttp(app: NestFastifyApplication): NestFastifyApplication {
  app.useLogger(app.get(Logger));
  enableCorsFor(app.get(AppConfig).corsOrigins, app);
  const fastify = app.getHttpAdapter().getInstance();
  fastify.removeAllContentTypeParsers();
  // JSON for every method but PATCH, whose body is a JSON Merge Patch: each media type
  // elsewhere is a 415 saying which one the method takes.
  for (const [mediaType, isItsMethod, refusal] of [
    [
      'application/json',
      (method: string) => method !== 'PATCH',
      `PATCH takes a JSON Merge Patch: send Content-Type: ${MERGE_PATCH_MEDIA_TYPE}`,
    ],
    [
      MERGE_PATCH_MEDIA_TYPE,
      (method: string) => method === 'PATCH',
      `${MERGE_PATCH_MEDIA_TYPE} is the body of a PATCH: send Content-Type: application/json`,
    ],
  ] as const) {
    app.useBodyParser(
      mediaType,
      { bodyLimit: BODY_LIMIT_BYTES },
      async (request: FastifyRequest, body: Buffer) => {
        if (!isItsMethod(request.method)) throw new UnsupportedMediaTypeException(refusal);
        const encoding = request.headers['content-encoding'];
        if (encoding !== undefined && encoding.toLowerCase() !== 'identity') {
          throw new UnsupportedMediaTypeException(
            `Content-Encoding ${encoding} is not supported: send the body uncompressed`,
          );
        }
        return parseJsonBody(body);
      },
    );
  }
  fastify.setReplySerializer((payload) => stringifyJson(payload));
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.headers(SECURITY_HEADERS).header(REQUEST_ID_HEADER, request.id);
    tracing().traceRequest(
      request.raw,
      reply.raw,
      { route: request.routeOptions.url, clientAddress: request.ip },
      done,
    );
  });
  if (tracing().enabled) {
    // Nest's guards, pipes and handler run after this hook, in the request's span.
    fastify.addHook('preHandler', (request, _reply, done) =>
      tracing().resumeRequest(request.raw, done),
    );
  }
  return app;
}

/**
 * CORS for exactly these origins; none: no CORS headers at all. Nest's Fastify adapter
 * answers the preflight in its first request hook, before the bearer guard (a browser
 * sends no Authorization header with it). A request from any other origin, or without
 * one, is served as if CORS were off: no CORS headers, and an `OPTIONS` is a 404.
 */
function enableCorsFor(origins: string[], app: NestFastifyApplication): void {
  if (origins.length === 0) return;
  const allowed = new Set(origins);
  app.enableCors({
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin)),
    methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: [...CORS_HEADERS.allowed],
    exposedHeaders: [...CORS_HEADERS.exposed],
    maxAge: CORS_PREFLIGHT_MAX_AGE_S,
    // An OPTIONS without Access-Control-Request-Method would otherwise get a text/plain
    // 400, outside the API's error shape.
    strictPreflight: false,
  });
}
