import { Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { AppConfig } from '../config/app-config.js';
import { loggerParams } from './logger-params.js';

/**
 * The service's logger for a command whose standard output is its answer (the token CLI
 * prints the token there): its lines, such as the audit trail's, go to standard error.
 */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => loggerParams(config, 2),
    }),
  ],
})
export class CommandLoggingModule {}
