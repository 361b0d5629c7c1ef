import type { Params } from 'nestjs-pino';
import { destination as fileDestination, stdTimeFunctions } from 'pino';
import { tracing } from '../common/tracing/tracing.js';
import type { AppConfig } from '../config/app-config.js';
import { chooseLogFormat } from './log-format.js';

/**
 * Wherever a secret could sit in a logged object. Request lines carry no headers at
 * all; this catches an Authorization header or a token in anything logged elsewhere.
 */
const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  '*.authorization',
  'token',
  '*.token',
  'secret',
  '*.secret',
  'password',
  '*.password',
];

/**
 * While tracing is on, each line written inside a span (a request's, a delivery's) names
 * it, so that a line leads to its trace and a trace to its lines.
 */
function traceFields(): Record<string, string> {
  const ids = tracing().activeIds();
  if (!ids) return {};
  return { trace_id: ids.traceId, span_id: ids.spanId, trace_flags: ids.sampled ? '01' : '00' };
}

/** Standard output's file descriptor, or standard error's. */
export type Destination = 1 | 2;

/**
 * The logger's settings: JSON lines on `destination`, or in a terminal the same fields
 * made readable by pino-pretty (see chooseLogFormat).
 */
export async function loggerParams(config: AppConfig, destination: Destination): Promise<Params> {
  const options = {
    level: config.logLevel,
    // The request line is written by RequestLogService, which knows the route.
    autoLogging: false,
    quietReqLogger: true,
    customAttributeKeys: { reqId: 'requestId' },
    redact: { paths: REDACTED_PATHS, censor: '[Redacted]' },
    timestamp: stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
    ...(tracing().enabled && { mixin: traceFields }),
  };
  const stream = destination === 1 ? process.stdout : process.stderr;
  // No request middleware: the lines that concern a request name its id themselves
  // (RequestLogService, HttpErrorFilter). nestjs-pino's would bind a child logger to
  // each request, and its mere presence has Fastify's middleware engine (middie) build
  // the request's address, host and query for every request.
  const http = { forRoutes: [] };
  if (chooseLogFormat(config, stream.isTTY === true) === 'json') {
    if (destination === 1) return { ...http, pinoHttp: options };
    return { ...http, pinoHttp: [options, fileDestination({ dest: 2, sync: true })] };
  }
  // Loaded only for a terminal: JSON output, the production case, never pays for it.
  const { default: pretty } = await import('pino-pretty');
  // Synchronous, in this thread, like the JSON lines: nothing is lost at exit.
  const readable = pretty({
    sync: true,
    destination,
    ignore: 'pid,hostname,context',
    messageFormat: '{if context}[{context}] {end}{msg}',
  });
  return { ...http, pinoHttp: [options, readable] };
}
