import { userInfo } from 'node:os';
import pg from 'pg';
import { MIGRATIONS_TABLE } from './backup/backup-catalog.js';

/** Runs one statement; its rows. */
export type Query = <Row = Record<string, unknown>>(
  sql: string,
  parameters?: unknown[],
) => Promise<Row[]>;

/** What the owner grants the service's role after migrating. */
export interface ServiceRoleGrant {
  /** DATABASE_URL's role. */
  role: string;
  /** Tables the service may only read and append to (the audit trail). */
  appendOnly: readonly string[];
}

/**
 * The role a connection URL logs in as: its user, else the one `pg` uses without one
 * (PGUSER, then the OS account).
 */
export function roleOf(url: string): string {
  const user = decodeURIComponent(new URL(url).username);
  return user || process.env.PGUSER || userInfo().username;
}

/**
 * Gives the service's role exactly what the service needs on the schema's tables, and
 * nothing more, whatever it held before: SELECT, INSERT, UPDATE and DELETE, only SELECT
 * and INSERT on the append-only tables, only SELECT on the migrations' record, USAGE and
 * SELECT on the sequences; no TRUNCATE, REFERENCES or TRIGGER, no CREATE on the schema.
 * It owns nothing, so it cannot ALTER, DROP or replace a table, a trigger or a function.
 * Run by the owner after every migration run (tables a migration adds are covered), in a
 * transaction of the caller's, so that the service never sees its grants half made.
 */
export async function grantServiceRole(
  query: Query,
  { role, appendOnly }: ServiceRoleGrant,
): Promise<void> {
  const [{ schema, member }] = await query<{ schema: string; member: boolean }>(
    `SELECT current_schema() AS schema, pg_has_role($1, current_user, 'MEMBER') AS member`,
    [role],
  );
  if (member) {
    throw new Error(
      `DATABASE_URL's role "${role}" is the owner's (DATABASE_MIGRATION_URL's) or a member of it, so it could do whatever the owner does: give the service a role of its own, which owns nothing`,
    );
  }
  const to = pg.escapeIdentifier(role);
  const inSchema = `IN SCHEMA ${pg.escapeIdentifier(schema)}`;
  const tables = (names: readonly string[]) => names.map((n) => pg.escapeIdentifier(n)).join(', ');
  const statements = [
    `REVOKE ALL ON ALL TABLES ${inSchema} FROM ${to}`,
    `REVOKE ALL ON ALL SEQUENCES ${inSchema} FROM ${to}`,
    `REVOKE CREATE ON SCHEMA ${pg.escapeIdentifier(schema)} FROM ${to}`,
    `GRANT USAGE ON SCHEMA ${pg.escapeIdentifier(schema)} TO ${to}`,
    `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES ${inSchema} TO ${to}`,
    `REVOKE INSERT, UPDATE, DELETE ON ${tables([MIGRATIONS_TABLE])} FROM ${to}`,
    ...(appendOnly.length > 0 ? [`REVOKE UPDATE, DELETE ON ${tables(appendOnly)} FROM ${to}`] : []),
    `GRANT USAGE, SELECT ON ALL SEQUENCES ${inSchema} TO ${to}`,
  ];
  for (const statement of statements) await query(statement);
}

/**
 * What the connection's role could erase, in one line, or undefined when it owns none of
 * the schema's tables and is no superuser: a deployment giving the service the owner's
 * role still works, and this says what that costs.
 */
export async function whatTheRoleCouldErase(
  query: Query,
  appendOnly: readonly string[],
): Promise<string | undefined> {
  const [{ role, superuser, owned }] = await query<{
    role: string;
    superuser: boolean;
    owned: string[] | null;
  }>(
    `SELECT current_user AS role,
            (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS superuser,
            (SELECT array_agg(relname::text ORDER BY relname) FROM pg_class
              WHERE relnamespace = current_schema()::regnamespace AND relkind IN ('r', 'p')
                AND pg_has_role(current_user, relowner, 'USAGE')) AS owned`,
  );
  const trail = (owned ?? []).filter((table) => appendOnly.includes(table));
  const advice =
    'run the service as a role that owns nothing, and give the owner as DATABASE_MIGRATION_URL (docs/operations/security.md#database-roles)';
  if (superuser) {
    return `the service's database role "${role}" is a superuser: it could do anything to the database, erase the audit trail included; ${advice}`;
  }
  if (!owned || owned.length === 0) return undefined;
  const what =
    trail.length > 0
      ? `it could disable ${trail.join(', ')}'s triggers and erase the audit trail, or drop any of them`
      : 'it could drop or alter any of them';
  return `the service's database role "${role}" owns its ${owned.length} table(s): ${what}; ${advice}`;
}
