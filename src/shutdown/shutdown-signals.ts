import { constants } from 'node:os';
import { type INestApplication, Logger } from '@nestjs/common';
import { tracing } from '../common/tracing/tracing.js';

/** Should a step of the shutdown hang, the process exits anyway after this. */
const SHUTDOWN_LIMIT_MS = 30_000;

/**
 * SIGTERM or SIGINT closes the application (drain, pool, embedded PostgreSQL) and exits
 * with 0; a second signal exits at once. Nest's `enableShutdownHooks()` is not used: it
 * ignores the second signal and re-raises the first, so the exit status is the signal's.
 */
export function closeOnSignals(app: INestApplication): void {
  const logger = new Logger('Shutdown');
  let closing = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (closing) {
      logger.warn(`${signal} again: exiting without finishing the shutdown`);
      process.exit(128 + constants.signals[signal]);
    }
    closing = true;
    logger.log(`${signal}: finishing the requests in flight, then stopping`);
    setTimeout(() => {
      logger.error(`the shutdown took over ${SHUTDOWN_LIMIT_MS} ms; exiting`);
      process.exit(1);
    }, SHUTDOWN_LIMIT_MS).unref();
    // The spans of the last requests are exported (within a bound) once they are answered.
    app
      .close()
      .then(() => tracing().shutdown())
      .then(
        () => {
          logger.log('stopped');
          process.exit(0);
        },
        (error: Error) => {
          logger.error(`the shutdown failed: ${error.message}`, error.stack);
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
