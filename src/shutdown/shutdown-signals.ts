import { constants } from 'node:os';
import { type INestApplication, Logger } from '@nestjs/common';
import { tracing } from '../common/tracing/tracing.js';

/** Should a step of the shutdown hang, the process exits anyway after this. */
const SHUTDOWN_LIMIT_MS = 30_000;

/**
 * The same signal again within this time is the same stop, not a second one: Ctrl-C in a
 * terminal signals npm and the service, and npm passes its copy on to the service; so
 * does a supervisor that signals every process of the group (systemd's default).
 */
export const REPEAT_WINDOW_MS = 1_000;

/**
 * SIGTERM or SIGINT closes the application (drain, pool, embedded PostgreSQL) and exits
 * with 0; a second signal, other than such a repeat, exits at once. Nest's
 * `enableShutdownHooks()` is not used: it ignores the second signal and re-raises the
 * first, so the exit status is the signal's.
 */
export function closeOnSignals(app: INestApplication): void {
  const logger = new Logger('Shutdown');
  let first: { signal: NodeJS.Signals; at: number } | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (first) {
      if (signal === first.signal && performance.now() - first.at < REPEAT_WINDOW_MS) {
        logger.log(`${signal} again within ${REPEAT_WINDOW_MS} ms: the same stop`);
        return;
      }
      logger.warn(`${signal} again: exiting without finishing the shutdown`);
      process.exit(128 + constants.signals[signal]);
    }
    first = { signal, at: performance.now() };
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
