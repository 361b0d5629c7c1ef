import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, Migration } from 'typeorm';
import { AppConfig } from '../config/app-config.js';

/** The advisory lock that lets one process at a time migrate a database ("PlantM"). */
const MIGRATION_LOCK_KEY = 0x506c616e744d;
/** How often a process waiting for another's migrations asks for the lock again. */
const MIGRATION_LOCK_POLL_MS = 100;

/**
 * Applies the pending migrations, one process at a time: replicas starting together on an
 * empty database would otherwise run the same `CREATE TABLE` at once, and all but one
 * would fail. The others wait for the lock, then find nothing pending. The lock is
 * PostgreSQL's session-level advisory lock on a connection of its own, so it needs a
 * direct connection (a transaction pooler cannot hold one). It is polled rather than
 * awaited, so that the statement time-out does not end a long wait.
 */
export async function runPendingMigrations(dataSource: DataSource): Promise<Migration[]> {
  const lockSession = dataSource.createQueryRunner();
  await lockSession.connect();
  try {
    while (!(await tryLock(lockSession.query.bind(lockSession)))) {
      await sleep(MIGRATION_LOCK_POLL_MS);
    }
    try {
      return await dataSource.runMigrations();
    } finally {
      await lockSession.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await lockSession.release();
  }
}

async function tryLock(query: (sql: string, values: unknown[]) => Promise<unknown>) {
  const [{ locked }] = (await query('SELECT pg_try_advisory_lock($1) AS locked', [
    MIGRATION_LOCK_KEY,
  ])) as [{ locked: boolean }];
  return locked;
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
    if (this.config.migrationsAtStart) await runPendingMigrations(this.dataSource);
  }
}
