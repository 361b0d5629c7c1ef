import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import type { DatabaseSchema } from './database-schema.js';
import { DatabaseServer } from './database-server.js';
import { migrationSettings, runPendingMigrations } from './migrations.js';
import { whatTheRoleCouldErase } from './service-role.js';

/** The application's DatabaseSchema, as DatabaseModule.forRoot was given it. */
export const DATABASE_SCHEMA = Symbol('DATABASE_SCHEMA');

/**
 * Pending migrations run before the service accepts requests, as the owner when there is
 * one, unless MIGRATIONS_AT_START is false (deployments that run `npm run migration:run`
 * as a job of their own). Then one warning line if the service's own role could erase
 * the audit trail (it owns the tables, or is a superuser).
 */
@Injectable()
export class MigrationsAtStart implements OnModuleInit {
  private readonly logger = new Logger('Database');

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly server: DatabaseServer,
    @Inject(DATABASE_SCHEMA) private readonly schema: DatabaseSchema,
    private readonly config: AppConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    if (this.config.migrationsAtStart) {
      await runPendingMigrations(
        this.dataSource.options,
        migrationSettings(this.config, this.server, this.schema),
      );
    }
    const warning = await whatTheRoleCouldErase(
      (sql, parameters) => this.dataSource.query(sql, parameters),
      this.schema.appendOnly ?? [],
    );
    if (warning) this.logger.warn(warning);
  }
}
