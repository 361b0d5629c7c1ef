import type { OnApplicationShutdown } from '@nestjs/common';
// The logger alone: the CLIs start faster without the rest of @nestjs/common (0.1 s).
import { Logger } from '@nestjs/common/services/logger.service.js';
import type { AppConfig } from '../config/app-config.js';
import { EmbeddedPostgresServer } from './embedded-postgres.js';

/**
 * Where the database is: DATABASE_URL (and DATABASE_MIGRATION_URL) when it is set,
 * otherwise the embedded PostgreSQL in DATA_DIR, which this process starts or joins, and
 * leaves on shutdown (stopping it when no other process uses it).
 */
export class DatabaseServer implements OnApplicationShutdown {
  private constructor(
    /** The service's role: DML on its tables, owning none. */
    readonly url: string,
    /** The tables' owner, for migrations and restore; undefined: `url`'s role does both. */
    readonly migrationUrl: string | undefined,
    private readonly embedded: EmbeddedPostgresServer | undefined,
  ) {}

  static async connect(config: AppConfig): Promise<DatabaseServer> {
    if (config.databaseUrl) {
      return new DatabaseServer(config.databaseUrl, config.databaseMigrationUrl, undefined);
    }
    const embedded = await EmbeddedPostgresServer.open(config.dataDir, new Logger('Database'));
    return new DatabaseServer(embedded.url, embedded.ownerUrl, embedded);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.embedded?.close();
  }
}
