import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, Migration } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { postgresPool } from './postgres-pool.js';
import { openSession } from './session-connection.js';

/** The advisory lock that lets one process at a time migrate a database ("PlantM"). */
const MIGRATION_LOCK_KEY = 0x506c616e744d;
/** How often a process waiting for another's migrations asks for the lock again. */
const MIGRATION_LOCK_POLL_MS = 100;

/**
 * Applies the pending migrations, one process at a time: replicas starting together on an
 * empty database would otherwise run the same `CREATE TABLE` at once, and all but one
 * would fail. The others wait for the lock, then find nothing pending. The lock is
 * PostgreSQL's session-level advisory lock, on a session of its own (openSession: a
 * direct connection behind a transaction pooler), held until that session ends. It is
 * polled rather than awaited, so that the statement time-out does not end a long wait.
 */
export async function runPendingMigrations(
  dataSource: DataSource,
  directUrl: string | undefined,
): Promise<Migration[]> {
  const lockSession = await openSession(postgresPool(dataSource), directUrl);
  try {
    for (;;) {
      const { rows } = await lockSession.client.query<{ locked: boolean }>(
        'SELECT pg_try_advisory_lock($1) AS locked',
        [MIGRATION_LOCK_KEY],
      );
      if (rows[0].locked) break;
      await sleep(MIGRATION_LOCK_POLL_MS);
    }
    return await dataSource.runMigrations();
  } finally {
    lockSession.close();
  }
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
      await runPendingMigrations(this.dataSource, this.config.databaseDirectUrl);
    }
  }
}
