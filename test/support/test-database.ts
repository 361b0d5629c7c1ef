import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, inject } from 'vitest';
import { APP_SCHEMA } from '../../src/app.schema.js';
import type { AppConfig } from '../../src/config/app-config.js';
import type { MigrationSettings } from '../../src/database/migrations.js';

/** True on a run against DATABASE_URL's server (CI's second), false on the embedded run. */
export const onDatabaseServerRun = Boolean(process.env.DATABASE_URL);

/**
 * For what does not depend on the database server: the embedded database's own behaviour,
 * and what the HTTP layer, parsing, the configuration, tracing, metrics, logs, the
 * documents or a stop do. The embedded run (`npm test`) runs it; the run on DATABASE_URL
 * skips it, having nothing to add.
 */
export const describeOnEmbeddedRun = describe.skipIf(onDatabaseServerRun);

/** Every database a test creates carries this prefix; nothing else is ever dropped. */
const TEST_DATABASE_PREFIX = 'plant_store_test_';

/**
 * The two login roles every test database is used with, as a deployment has them
 * (docs/operations/security.md#database-roles): the owner of the database and its tables,
 * and the service's, which owns nothing and gets its rights from the migrations.
 */
export const TEST_OWNER_ROLE = 'plant_store_test_owner';
export const TEST_SERVICE_ROLE = 'plant_store_test_service';
/** Test roles on test servers: a password only because the embedded server asks for one. */
export const TEST_ROLE_PASSWORD = 'plant-store-test';

export interface TestDatabase {
  /** The service's role (DATABASE_URL): what the service and its commands connect as. */
  url: string;
  /** The owner's (DATABASE_MIGRATION_URL): migrations, restore, the contract step, archive. */
  migrationUrl: string;
  /** DATABASE_URL and DATABASE_MIGRATION_URL, as a deployment sets them. */
  env: { DATABASE_URL: string; DATABASE_MIGRATION_URL: string };
  /** A superuser on this database, for what a test does behind the service's back. */
  adminUrl: string;
  /**
   * `config`'s migration settings as the two roles have them: the migrations run as the
   * owner and grant the service's role its rights, as `npm run migration:run` does.
   */
  migrationSettings(config: AppConfig): MigrationSettings;
  /** Runs SQL directly as a superuser, to check what is really stored. */
  query<Row = Record<string, unknown>>(sql: string): Promise<Row[]>;
  /**
   * Takes the database away from its clients, without touching the shared server: it
   * refuses new connections and its sessions are ended; or lets clients in again.
   */
  setReachable(reachable: boolean): Promise<void>;
  drop(): Promise<void>;
}

export interface TestDatabaseOptions {
  /** A server encoding other than the server's default, e.g. LATIN1 (with the C locale). */
  encoding?: string;
  /** A superuser URL of another server than the run's. */
  adminUrl?: string;
}

/** A new, empty database on the run's PostgreSQL server (see global-setup.ts), or `adminUrl`'s. */
export async function createTestDatabase({
  encoding,
  adminUrl = inject('databaseAdminUrl'),
}: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const name = `${TEST_DATABASE_PREFIX}${randomBytes(6).toString('hex')}`;
  await createTestRoles(adminUrl);
  await runQuery(
    adminUrl,
    `CREATE DATABASE ${name} OWNER ${TEST_OWNER_ROLE}` +
      (encoding ? ` ENCODING '${encoding}' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0` : ''),
  );
  const as = (role?: string) => {
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    if (role !== undefined) {
      url.username = role;
      url.password = TEST_ROLE_PASSWORD;
    }
    return url.toString();
  };
  const env = { DATABASE_URL: as(TEST_SERVICE_ROLE), DATABASE_MIGRATION_URL: as(TEST_OWNER_ROLE) };
  return {
    url: env.DATABASE_URL,
    migrationUrl: env.DATABASE_MIGRATION_URL,
    env,
    adminUrl: as(),
    migrationSettings: (config) => ({
      ...config,
      databaseMigrationUrl: env.DATABASE_MIGRATION_URL,
      grant: { role: TEST_SERVICE_ROLE, appendOnly: APP_SCHEMA.appendOnly ?? [] },
    }),
    query: (sql) => runQuery(as(), sql),
    setReachable: async (reachable) => {
      await runQuery(adminUrl, `ALTER DATABASE ${name} ALLOW_CONNECTIONS ${reachable}`);
      if (!reachable) {
        await runQuery(
          adminUrl,
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}'`,
        );
      }
    },
    drop: async () => {
      await runQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

const rolesMade = new Map<string, Promise<void>>();

/**
 * The test roles on the server of `adminUrl`, made once and kept (other runs may be using
 * them); made by several runs at once, the loser's error is only that it exists.
 */
function createTestRoles(adminUrl: string): Promise<void> {
  let made = rolesMade.get(adminUrl);
  if (made === undefined) {
    made = (async () => {
      for (const role of [TEST_OWNER_ROLE, TEST_SERVICE_ROLE]) {
        const [exists] = await runQuery(
          adminUrl,
          `SELECT 1 FROM pg_roles WHERE rolname = '${role}'`,
        );
        if (exists) continue;
        await runQuery(
          adminUrl,
          `CREATE ROLE ${role} LOGIN PASSWORD '${TEST_ROLE_PASSWORD}'`,
        ).catch(async (error: unknown) => {
          const [madeMeanwhile] = await runQuery(
            adminUrl,
            `SELECT 1 FROM pg_roles WHERE rolname = '${role}'`,
          );
          if (!madeMeanwhile) throw error;
        });
      }
    })();
    rolesMade.set(adminUrl, made);
  }
  return made;
}

async function runQuery<Row>(connectionString: string, sql: string): Promise<Row[]> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return (await client.query(sql)).rows as Row[];
  } finally {
    await client.end();
  }
}
