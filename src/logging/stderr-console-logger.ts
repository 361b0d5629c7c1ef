import { ConsoleLogger, type LogLevel } from '@nestjs/common';

/**
 * Nest's console logger with every line on standard error (Nest's own writes all but
 * errors to standard output): for a command whose standard output is its answer, such as
 * the token CLI's token, which a script reads whatever the modules log while starting.
 */
export class StderrConsoleLogger extends ConsoleLogger {
  protected override printMessages(
    messages: unknown[],
    context?: string,
    logLevel?: LogLevel,
    _writeStreamType?: 'stdout' | 'stderr',
    errorStack?: unknown,
    params?: Record<string, unknown>,
  ): void {
    super.printMessages(messages, context, logLevel, 'stderr', errorStack, params);
  }
}
