import type { ErrorClassifier } from '../common/filters/http-error.filter.js';
import { clientCausedRefusal, isDatabaseUnavailable } from './database-errors.js';

/** Seconds a client is asked to wait when the database does not answer. */
const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * What the database raises, as HTTP answers, for every module: what the request's data
 * caused is the client's 400 or 409 (a module that can say more, a missing parent as 404
 * say, catches it first); a database that cannot serve us now is a 503.
 */
export const classifyDatabaseError: ErrorClassifier = (exception) => {
  const refusal = clientCausedRefusal(exception);
  if (refusal) return { ...refusal };
  if (isDatabaseUnavailable(exception)) {
    return {
      status: 503,
      message: 'the database is unavailable; try again shortly',
      headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) },
      warning: `the database is unavailable: ${(exception as Error).message}`,
    };
  }
  return undefined;
};
