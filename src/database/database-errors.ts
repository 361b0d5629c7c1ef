import { QueryFailedError } from 'typeorm';

/** Raised where the service finds out by itself that the database does not answer. */
export class DatabaseUnavailableError extends Error {
  override name = 'DatabaseUnavailableError';
}

/**
 * SQLSTATE classes and codes that mean "the database cannot serve us now", not "this
 * statement is wrong": connection exceptions (08), authorization (28), insufficient
 * resources (53: too many connections, disk full), operator intervention (57: shutdown,
 * statement_timeout), and a database refusing connections (55000 on connect).
 */
const UNAVAILABLE_SQLSTATE = /^(08|28|53|57)[0-9A-Z]{3}$|^55000$/;

/** Socket-level failures reaching the server. */
const UNAVAILABLE_NODE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);

/** What `pg` and its pool throw without a code: connect, pool and query_timeout expiries. */
const UNAVAILABLE_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error)/;

/**
 * Whether an error means the database is unreachable, stuck or refusing us (a 503 for
 * the client, worth retrying later) rather than a fault in the request or the code.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (error instanceof DatabaseUnavailableError) return true;
  const cause = driverErrorOf(error);
  if (!(cause instanceof Error)) return false;
  const { code } = cause as NodeJS.ErrnoException;
  if (typeof code === 'string') {
    return UNAVAILABLE_SQLSTATE.test(code) || UNAVAILABLE_NODE_CODES.has(code);
  }
  return UNAVAILABLE_MESSAGES.test(cause.message);
}

/** What pg raised, whether it reached us directly or wrapped by TypeORM. */
function driverErrorOf(error: unknown): unknown {
  return error instanceof QueryFailedError ? error.driverError : error;
}

function sqlStateOf(error: unknown): string | undefined {
  const { code } = (driverErrorOf(error) ?? {}) as { code?: unknown };
  return typeof code === 'string' ? code : undefined;
}

/**
 * A data exception (SQLSTATE class 22): a value the statement carried is one the database
 * refuses. In a batch, one item's value fails the whole statement.
 */
export function isDataException(error: unknown): boolean {
  return sqlStateOf(error)?.startsWith('22') === true;
}

/**
 * A character the database's encoding cannot represent (an emoji in a LATIN1 database):
 * untranslatable_character (22P05) or character_not_in_repertoire (22021). The client's
 * fault, not the service's: a 400.
 */
export function isUnstorableCharacter(error: unknown): boolean {
  const code = sqlStateOf(error);
  return code === '22P05' || code === '22021';
}

/** unique_violation (23505): a row with the same unique key exists. */
export function isUniqueViolation(error: unknown): boolean {
  return sqlStateOf(error) === '23505';
}
