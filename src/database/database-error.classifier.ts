import type { ErrorClassifier } from '../common/filters/http-error.filter.js';
import {
  isDatabaseUnavailable,
  isUniqueViolation,
  isUnstorableCharacter,
} from './database-errors.js';

/** Seconds a client is asked to wait when the database does not answer. */
const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * What the database raises, as HTTP answers, for every module: a value it cannot store is
 * the client's 400; a row that exists already under a unique key is a 409 (a module that
 * can say more catches it first); a database that cannot serve us now is a 503.
 */
export const classifyDatabaseError: ErrorClassifier = (exception) => {
  if (isUnstorableCharacter(exception)) {
    return { status: 400, message: 'the request holds a character the database cannot store' };
  }
  if (isUniqueViolation(exception)) {
    return { status: 409, message: 'this conflicts with something that exists already' };
  }
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
