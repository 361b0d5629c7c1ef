import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { EmbeddedPostgresServer } from './embedded-postgres.js';

/**
 * Where the database is: DATABASE_URL when it is set, otherwise the embedded PostgreSQL
 * this process starts (or finds running) in DATA_DIR, and stops again on shutdown.
 */
export class DatabaseServer implements OnApplicationShutdown {
  private constructor(
    readonly url: string,
    private readonly embedded: EmbeddedPostgresServer | undefined,
  ) {}

  static async connect(config: AppConfig): Promise<DatabaseServer> {
    if (config.databaseUrl) return new DatabaseServer(config.databaseUrl, undefined);
    const embedded = await EmbeddedPostgresServer.open(config.dataDir, new Logger('Database'));
    return new DatabaseServer(embedded.url, embedded);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.embedded?.close();
  }
}
