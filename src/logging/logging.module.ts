import { Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { stdTimeFunctions } from 'pino';
import { AppConfig } from '../config/app-config.js';
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
 * JSON lines on stdout (pino through nestjs-pino): Nest's own logs, the services' logs
 * (bound to the request id while a request is handled) and one line per request.
 */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => ({
        pinoHttp: {
          level: config.logLevel,
          // The request line is written by RequestLogService, which knows the route.
          autoLogging: false,
          quietReqLogger: true,
          customAttributeKeys: { reqId: 'requestId' },
          redact: { paths: REDACTED_PATHS, censor: '[Redacted]' },
          timestamp: stdTimeFunctions.isoTime,
          formatters: { level: (label: string) => ({ level: label }) },
        },
      }),
    }),
  ],
  providers: [RequestLogService],
})
export class LoggingModule {}
