import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

/** Every database a test creates carries this prefix; nothing else is ever dropped. */
const TEST_DATABASE_PREFIX = 'plant_store_test_';

export interface TestDatabase {
  url: string;
  /** Runs SQL directly, to check what is really stored. */
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
  await runQuery(
    adminUrl,
    `CREATE DATABASE ${name}` +
      (encoding ? ` ENCODING '${encoding}' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0` : ''),
  );
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    query: (sql) => runQuery(url.toString(), sql),
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

async function runQuery<Row>(connectionString: string, sql: string): Promise<Row[]> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return (await client.query(sql)).rows as Row[];
  } finally {
    await client.end();
  }
}
