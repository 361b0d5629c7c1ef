import type pg from 'pg';
import type { AppConfig } from '../config/app-config.js';

/** A statement for pg's pool: its text, and a name if it is to be prepared once per connection. */
export type Statement = Omit<pg.QueryConfig, 'values'>;

/**
 * The statement as it is safe to send: prepared under its name on a direct connection,
 * unnamed (parsed and planned each time) behind a transaction pooler, where a statement
 * prepared on one server session is unknown to the next one (PgBouncer 1.18 cannot carry
 * them). Every repository that names a statement sends it through this; a statement sent
 * as plain text is unnamed, so always safe.
 */
export function poolerSafe(
  { name, text }: Statement,
  { throughTransactionPooler }: Pick<AppConfig, 'throughTransactionPooler'>,
): Statement {
  return throughTransactionPooler ? { text } : { name, text };
}
