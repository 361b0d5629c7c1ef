import { Logger, type LoggerService } from '@nestjs/common';

const toStderr = (message: unknown, context?: unknown) =>
  process.stderr.write(`${context ? `${String(context)}: ` : ''}${String(message)}\n`);

/** Where the lines buffered for the service's logger go when it is never created. */
const STDERR_LOGGER: LoggerService = { log: () => {}, warn: toStderr, error: toStderr };

/**
 * Ends a start the configuration does not allow, with exit code 1: on stderr, the warnings
 * written before it (tracing's, buffered for a logger that will now never exist), then
 * the reason.
 */
export function refuseStart(reason: string): never {
  Logger.overrideLogger(STDERR_LOGGER);
  Logger.flush();
  process.stderr.write(`${reason}\n`);
  process.exit(1);
}

/**
 * Thrown while the application initialises when it must not serve (a key that cannot
 * decrypt what the database holds): the entry point closes it and calls refuseStart with
 * the message, one line.
 */
export class StartRefusedError extends Error {
  override name = 'StartRefusedError';
}
