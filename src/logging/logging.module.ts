import { Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { stdTimeFunctions } from 'pino';
import { tracing } from '../common/tracing/tracing.js';
import { AppConfig } from '../config/app-config.js';
import { chooseLogFormat } from './log-format.js';
import { RequestLogService } from './request-log.service.js';

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

/**
 * Lines on stdout (pino through nestjs-pino): Nest's own logs, the services' logs (bound
 * to the request id while a request is handled) and one line per request. JSON, or in a
 * terminal the same fields made readable by pino-pretty (see chooseLogFormat).
 */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      inject: [AppConfig],
      useFactory: async (config: AppConfig) => {
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
        if (chooseLogFormat(config, process.stdout.isTTY === true) === 'json') {
          return { pinoHttp: options };
        }
        // Loaded only for a terminal: JSON output, the production case, never pays for it.
        const { default: pretty } = await import('pino-pretty');
        // Synchronous, in this thread, like the JSON lines: nothing is lost at exit.
        const readable = pretty({
          sync: true,
          ignore: 'pid,hostname,context',
          messageFormat: '{if context}[{context}] {end}{msg}',
        });
        return { pinoHttp: [options, readable] };
      },
    }),
  ],
  providers: [RequestLogService],
})
export class LoggingModule {}
