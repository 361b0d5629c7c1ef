import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  DataSource,
  type DataSourceOptions,
  type Migration,
  MigrationExecutor,
  type MigrationInterface,
} from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { isLockNotAvailable } from './database-errors.js';
import { postgresPool } from './postgres-pool.js';
import { openSession } from './session-connection.js';

/** The advisory lock that lets one process at a time migrate a database ("PlantM"). */
const MIGRATION_LOCK_KEY = 0x506c616e744d;
/** How often a process waiting for another's migrations asks for the lock again. */
const MIGRATION_LOCK_POLL_MS = 100;

export type MigrationSettings = Pick<AppConfig, 'databaseDirectUrl' | 'migrationLockTimeoutMs'>;

/**
 * The session settings every migration runs with (scripts/lint-migrations.mjs lints the
 * migrations' SQL after them). `lock_timeout`: a statement waiting for a table's lock
 * makes every request on that table queue behind it, so it gives up after this long
 * instead. `statement_timeout` off: a concurrent index build on a large table takes as
 * long as it takes, blocking no one; what a statement can block is bounded by the lock
 * timeout and by the linter, not by the service's DATABASE_STATEMENT_TIMEOUT_MS.
 */
export function migrationSessionSettings({ migrationLockTimeoutMs }: MigrationSettings): {
  lock_timeout: string;
  statement_timeout: string;
} {
  return { lock_timeout: `${migrationLockTimeoutMs}ms`, statement_timeout: '0' };
}

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
    url: settings.databaseDirectUrl ?? service.url,
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
    const lockSession = await openSession(postgresPool(migrator), settings.databaseDirectUrl);
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
    try {
      return await migrator.runMigrations({ transaction: 'each' });
    } catch (error) {
      const [failed] = await new MigrationExecutor(migrator).getPendingMigrations();
      throw explained(error, failed?.instance, settings);
    }
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

/**
 * Pending migrations run before the service accepts requests, unless MIGRATIONS_AT_START
 * is false (deployments that run `npm run migration:run` as a job of their own).
 */
@Injectable()
export class MigrationsAtStart implements OnModuleInit {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    if (this.config.migrationsAtStart) {
      await runPendingMigrations(this.dataSource.options, this.config);
    }
  }
}
