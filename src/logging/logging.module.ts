import { Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { AppConfig } from '../config/app-config.js';
import { loggerParams } from './logger-params.js';
import { RequestLogService } from './request-log.service.js';

/**
 * Lines on stdout (pino through nestjs-pino): Nest's own logs, the services' logs and one
 * line per request. The request's line and the errors it ran into name its request id.
 */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => loggerParams(config, 1),
    }),
  ],
  providers: [RequestLogService],
})
export class LoggingModule {}
