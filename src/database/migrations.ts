import { setTimeout as sleep } from 'node:timers/promises';
import {
  DataSource,
  type DataSourceOptions,
  type Logger as TypeOrmLogger,
  type Migration,
  MigrationExecutor,
  type MigrationInterface,
} from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { isLockNotAvailable } from './database-errors.js';
import type { DatabaseSchema } from './database-schema.js';
import type { DatabaseServer } from './database-server.js';
import { postgresPool } from './postgres-pool.js';
import { grantServiceRole, roleOf, type ServiceRoleGrant } from './service-role.js';
import { openSession } from './session-connection.js';

/** The advisory lock that lets one process at a time migrate a database ("PlantM"). */
const MIGRATION_LOCK_KEY = 0x506c616e744d;
/** How often a process waiting for another's migrations asks for the lock again. */
const MIGRATION_LOCK_POLL_MS = 100;

export type MigrationSettings = Pick<
  AppConfig,
  'databaseDirectUrl' | 'databaseMigrationUrl' | 'migrationLockTimeoutMs'
> & {
  /** Given with an owner's URL of another role: what the owner grants after migrating. */
  grant?: ServiceRoleGrant;
  /**
   * The caller commits synchronously right after (a restore's load): the migrations'
   * commits need not each wait for their WAL to reach the disk.
   */
  flushedByNextCommit?: boolean;
};

/**
 * Where migrations (and restore) run: as the owner (DATABASE_MIGRATION_URL, or the
 * embedded database's owner) when there is one, granting DATABASE_URL's role what the
 * service needs; otherwise as DATABASE_URL's role itself, as before there were two.
 */
export function migrationSettings(
  config: AppConfig,
  server: DatabaseServer,
  schema: DatabaseSchema,
): MigrationSettings {
  const owner = server.migrationUrl;
  const role = roleOf(server.url);
  return {
    databaseDirectUrl: config.databaseDirectUrl,
    databaseMigrationUrl: owner,
    migrationLockTimeoutMs: config.migrationLockTimeoutMs,
    grant:
      owner === undefined || roleOf(owner) === role
        ? undefined
        : { role, appendOnly: schema.appendOnly ?? [] },
  };
}

/** The URL migrations connect to: the owner's, else the service's own PostgreSQL. */
export function migrationUrl(service: DataSourceOptions, settings: MigrationSettings): string {
  return (
    settings.databaseMigrationUrl ?? settings.databaseDirectUrl ?? (service as { url: string }).url
  );
}

/**
 * The session settings every migration runs with (scripts/lint-migrations.mjs lints the
 * migrations' SQL after them). `lock_timeout`: a statement waiting for a table's lock
 * makes every request on that table queue behind it, so it gives up after this long
 * instead. `statement_timeout` off: a concurrent index build on a large table takes as
 * long as it takes, blocking no one; what a statement can block is bounded by the lock
 * timeout and by the linter, not by the service's DATABASE_STATEMENT_TIMEOUT_MS.
 * `synchronous_commit` off only when the caller's next commit is synchronous.
 */
export function migrationSessionSettings({
  migrationLockTimeoutMs,
  flushedByNextCommit,
}: MigrationSettings): {
  lock_timeout: string;
  statement_timeout: string;
  synchronous_commit?: 'off';
} {
  const settings = { lock_timeout: `${migrationLockTimeoutMs}ms`, statement_timeout: '0' };
  // A later synchronous commit flushes the WAL before it, theirs included: a crash before
  // it loses them and it alike, and the whole can be run again (0.1 s of a restore).
  return flushedByNextCommit ? { ...settings, synchronous_commit: 'off' } : settings;
}

/** Says nothing: what a migration run has to say, its caller says. */
const SILENT_LOGGER: TypeOrmLogger = {
  logQuery: () => undefined,
  logQueryError: () => undefined,
  logQuerySlow: () => undefined,
  logSchemaBuild: () => undefined,
  logMigration: () => undefined,
  log: () => undefined,
};

/**
 * The data source migrations run on: the service's, with a pool of their own whose
 * sessions carry migrationSessionSettings (hence a direct connection behind a transaction
 * pooler, which keeps no session settings) and no client-side query time-out. Three
 * connections: the migrations', the lock's session without a direct URL, and the one an
 * index build's progress is read on (concurrent-index.ts).
 */
export function migrationDataSourceOptions(
  service: DataSourceOptions,
  settings: MigrationSettings,
): DataSourceOptions {
  if (service.type !== 'postgres') throw new Error('migrations run on PostgreSQL only');
  const options = Object.entries(migrationSessionSettings(settings))
    .map(([name, value]) => `-c ${name}=${value}`)
    .join(' ');
  return {
    ...service,
    url: migrationUrl(service, settings),
    // TypeORM writes every failed migration on the console; the error itself, the
    // database's message, is what the caller reports, in one line.
    logger: SILENT_LOGGER,
    extra: {
      max: 3,
      application_name: 'plant-store migrations',
      connectionTimeoutMillis: (service.extra as { connectionTimeoutMillis?: number })
        ?.connectionTimeoutMillis,
      options,
    },
  };
}

/**
 * Runs `work` on the migrations' data source, one process at a time: replicas starting
 * together on an empty database would otherwise run the same `CREATE TABLE` at once, and
 * all but one would fail. The others wait for the lock, then find nothing pending. The
 * lock is PostgreSQL's session-level advisory lock, on a session of its own
 * (openSession: a direct connection behind a transaction pooler), held until that
 * session ends. It is polled rather than awaited, so that no time-out ends a long wait.
 */
async function migrate<T>(
  service: DataSourceOptions,
  settings: MigrationSettings,
  work: (migrator: DataSource) => Promise<T>,
): Promise<T> {
  const migrator = await new DataSource(migrationDataSourceOptions(service, settings)).initialize();
  try {
    const lockSession = await openSession(
      postgresPool(migrator),
      settings.databaseMigrationUrl ?? settings.databaseDirectUrl,
    );
    try {
      for (;;) {
        const { rows } = await lockSession.client.query<{ locked: boolean }>(
          'SELECT pg_try_advisory_lock($1) AS locked',
          [MIGRATION_LOCK_KEY],
        );
        if (rows[0].locked) break;
        await sleep(MIGRATION_LOCK_POLL_MS);
      }
      return await work(migrator);
    } finally {
      lockSession.close();
    }
  } finally {
    await migrator.destroy();
  }
}

/** A migration as TypeORM names it: its `name`, else its class's. */
function nameOf(migration: MigrationInterface): string {
  return migration.name ?? migration.constructor.name;
}

/** Why `migration` failed, when it was the lock time-out, in words an operator can act on. */
function explained(
  error: unknown,
  migration: MigrationInterface | undefined,
  settings: MigrationSettings,
): unknown {
  if (!isLockNotAvailable(error) || migration === undefined) return error;
  const outcome =
    migration.transaction === false
      ? 'it runs without a transaction and is written to be run again'
      : 'its transaction was rolled back';
  return new Error(
    `migration ${nameOf(migration)} gave up after waiting ${settings.migrationLockTimeoutMs} ms ` +
      `(MIGRATION_LOCK_TIMEOUT_MS) for a lock that another session holds, a long ` +
      `transaction or traffic on the same table; ${outcome}, and it is not recorded as ` +
      `applied: run the migrations again, at a quieter time or with a longer ` +
      `MIGRATION_LOCK_TIMEOUT_MS`,
    { cause: error },
  );
}

/** Applies the pending migrations, each in a transaction unless it says `transaction = false`. */
export function runPendingMigrations(
  service: DataSourceOptions,
  settings: MigrationSettings,
): Promise<Migration[]> {
  return migrate(service, settings, async (migrator) => {
    // A query runner of our own, released whatever happens: TypeORM's own keeps its
    // connection when the migrations table cannot be made (a role without CREATE), and
    // the pool's end then waited for it.
    const runner = migrator.createQueryRunner();
    let applied: Migration[];
    try {
      const executor = new MigrationExecutor(migrator, runner);
      executor.transaction = 'each';
      applied = await executor.executePendingMigrations();
    } catch (error) {
      const [failed] = await new MigrationExecutor(migrator, runner)
        .getPendingMigrations()
        .catch(() => []);
      throw explained(error, failed?.instance, settings);
    } finally {
      await runner.release();
    }
    // Every run, so that a table a migration added is covered, and a grant made by hand
    // beyond what the service needs is taken back.
    if (settings.grant) {
      const { grant } = settings;
      await migrator.transaction((manager) =>
        grantServiceRole((sql, parameters) => manager.query(sql, parameters), grant),
      );
    }
    return applied;
  });
}

/**
 * Reverts the last applied migration, in a transaction unless it says
 * `transaction = false` (TypeORM's own revert would wrap even those in one, where
 * `DROP INDEX CONCURRENTLY` cannot run). Its name, or undefined when none was applied.
 */
export function revertLastMigration(
  service: DataSourceOptions,
  settings: MigrationSettings,
): Promise<string | undefined> {
  return migrate(service, settings, async (migrator) => {
    const [last] = await new MigrationExecutor(migrator).getExecutedMigrations();
    if (last === undefined) return undefined;
    const migration = migrator.migrations.find((candidate) => nameOf(candidate) === last.name);
    try {
      await migrator.undoLastMigration({
        transaction: migration?.transaction === false ? 'none' : 'each',
      });
    } catch (error) {
      throw explained(error, migration, settings);
    }
    return last.name;
  });
}
