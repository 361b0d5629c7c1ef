import { QueryFailedError } from 'typeorm';

/** Raised where the service finds out by itself that the database does not answer. */
export class DatabaseUnavailableError extends Error {
  override name = 'DatabaseUnavailableError';
}

/**
 * SQLSTATE classes and codes that mean "the database cannot serve us now", not "this
 * statement is wrong": connection exceptions (08), authorization (28), insufficient
 * resources (53: too many connections, disk full), operator intervention (57: shutdown,
 * statement_timeout), a database refusing connections (55000 on connect), a server that
 * takes no writes (25006: a standby, or a primary demoted or set read-only), a
 * transaction that lost a race (40001 serialization failure, 40P01 deadlock) and a lock
 * not had within `lock_timeout` (55P03).
 */
const UNAVAILABLE_SQLSTATE = /^(08|28|53|57)[0-9A-Z]{3}$|^(55000|25006|40001|40P01|55P03)$/;

/** read_only_sql_transaction: the server, or this session, takes no writes now. */
export const READ_ONLY_SQLSTATE = '25006';

/**
 * Refusals that leave nothing done, so the same statement or transaction may simply run
 * again: a server that takes no writes (the next connection may reach one that does), a
 * serialization failure and a deadlock (the other transaction has moved on). A lost
 * connection is not among them: a commit may have happened unseen.
 */
const RETRYABLE_SQLSTATE = new Set([READ_ONLY_SQLSTATE, '40001', '40P01']);

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

/** The statement or transaction failed without effect, and may run again as it was. */
export function isRetryableRefusal(error: unknown): boolean {
  const code = sqlStateOf(error);
  return code !== undefined && RETRYABLE_SQLSTATE.has(code);
}

/**
 * undefined_table (42P01) or undefined_column (42703): the schema is not migrated that far
 * yet, as when the service starts before the job that migrates (MIGRATIONS_AT_START=false).
 */
export function isSchemaNotMigratedYet(error: unknown): boolean {
  const code = sqlStateOf(error);
  return code === '42P01' || code === '42703';
}

/** lock_not_available (55P03): `lock_timeout` passed while the statement waited for a lock. */
export function isLockNotAvailable(error: unknown): boolean {
  return sqlStateOf(error) === '55P03';
}

/** unique_violation (23505): a row with the same unique key exists. */
export function isUniqueViolation(error: unknown): boolean {
  return sqlStateOf(error) === '23505';
}

/**
 * foreign_key_violation (23503): a row refers to one that does not exist (an insert, or
 * a race with the parent's delete), or a row still referred to was deleted. A module
 * that knows which parent is missing may answer 404 instead of the generic 409.
 */
export function isForeignKeyViolation(error: unknown): boolean {
  return sqlStateOf(error) === '23503';
}

/** What a client-caused refusal means, in words a client understands, and its status. */
export interface ClientCausedRefusal {
  status: 400 | 409;
  message: string;
}

/**
 * The integrity (23) and data (22) errors a request can provoke, whatever the module:
 * they say what was wrong with the data, never how the SQL failed.
 */
const CLIENT_CAUSED_REFUSALS: Record<string, ClientCausedRefusal> = {
  '23505': { status: 409, message: 'this conflicts with something that exists already' },
  '23001': { status: 409, message: 'this is still referred to by something else' },
  '23P01': { status: 409, message: 'this conflicts with something that exists already' },
  '23502': { status: 400, message: 'a required value is missing' },
  '23514': { status: 400, message: 'a value is outside what is allowed' },
  '22001': { status: 400, message: 'a value is too long' },
  '22003': { status: 400, message: 'a number is out of range' },
  '22P02': { status: 400, message: 'a value is not in a valid form' },
  '22P05': { status: 400, message: 'the request holds a character the database cannot store' },
  '22021': { status: 400, message: 'the request holds a character the database cannot store' },
};
const MISSING_REFERENCE: ClientCausedRefusal = {
  status: 409,
  message: 'this refers to something that does not exist',
};
const STILL_REFERENCED = CLIENT_CAUSED_REFUSALS['23001'];
const OTHER_DATA_EXCEPTION: ClientCausedRefusal = {
  status: 400,
  message: 'a value cannot be stored',
};

/**
 * The 4xx a database refusal means when the request's data caused it; undefined when
 * the fault is not the client's (an outage, a bug in a statement).
 */
export function clientCausedRefusal(error: unknown): ClientCausedRefusal | undefined {
  const code = sqlStateOf(error);
  if (code === undefined) return undefined;
  if (code === '23503') {
    // PostgreSQL's detail tells the two directions apart: "Key (…)=(…) is not present in
    // table …" for a missing parent, "… is still referenced from table …" otherwise.
    const { detail } = driverErrorOf(error) as { detail?: unknown };
    return typeof detail === 'string' && detail.includes('still referenced')
      ? STILL_REFERENCED
      : MISSING_REFERENCE;
  }
  return CLIENT_CAUSED_REFUSALS[code] ?? (code.startsWith('22') ? OTHER_DATA_EXCEPTION : undefined);
}
