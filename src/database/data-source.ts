import pg from 'pg';
import type { DataSourceOptions } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import type { DatabaseSchema } from './database-schema.js';

// pg writes a Date parameter in the process's time zone unless told otherwise: in a zone
// whose offset then had seconds (New York's local mean time, -04:56:02, before 1883) it
// stored another instant. In UTC every instant a date-time may name is written exactly.
pg.defaults.parseInputDatesAsUTC = true;

/**
 * A frozen server cannot enforce its own statement_timeout, so `pg` bounds the wait for
 * an answer too, this much later.
 */
const CLIENT_TIMEOUT_MARGIN_MS = 1_000;

export type DatabaseLimits = Pick<
  AppConfig,
  | 'databasePoolSize'
  | 'databaseConnectTimeoutMs'
  | 'databaseStatementTimeoutMs'
  | 'throughTransactionPooler'
>;

/**
 * The longest a request waits for the database before its 503: a free connection, then
 * its statement, and the client's margin beyond it.
 */
export function databaseAnswerLimitMs(limits: DatabaseLimits): number {
  return (
    limits.databaseConnectTimeoutMs + limits.databaseStatementTimeoutMs + CLIENT_TIMEOUT_MARGIN_MS
  );
}

/**
 * The one definition of how the service talks to PostgreSQL. The limits (AppConfig's
 * DATABASE_* settings) make a stuck database cost a request seconds, not forever.
 */
export function dataSourceOptions(
  url: string,
  limits: DatabaseLimits,
  { entities, migrations }: DatabaseSchema,
): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities,
    migrations,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: false,
    extra: {
      max: limits.databasePoolSize,
      application_name: 'plant-store',
      connectionTimeoutMillis: limits.databaseConnectTimeoutMs,
      // A transaction pooler refuses session settings at connect; there PostgreSQL's own
      // setting applies (docs/operations/configuration.md).
      statement_timeout: limits.throughTransactionPooler
        ? undefined
        : limits.databaseStatementTimeoutMs,
      query_timeout: limits.databaseStatementTimeoutMs + CLIENT_TIMEOUT_MARGIN_MS,
    },
  };
}
