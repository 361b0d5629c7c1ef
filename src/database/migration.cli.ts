import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { APP_SCHEMA } from '../app.schema.js';
import { AppConfig } from '../config/app-config.js';
import { dataSourceOptions } from './data-source.js';
import { DatabaseServer } from './database-server.js';
import { runPendingMigrations } from './migrations.js';

/**
 * `npm run migration:run` / `migration:revert`: the service runs pending migrations at
 * start; this runs them (or reverts the last one) on their own, on either database.
 */
async function main(command: string | undefined): Promise<void> {
  if (command !== 'run' && command !== 'revert') {
    throw new Error('usage: migration.cli.js run|revert');
  }
  const config = AppConfig.fromEnvironment();
  const server = await DatabaseServer.connect(config);
  const dataSource = new DataSource(dataSourceOptions(server.url, config, APP_SCHEMA));
  try {
    await dataSource.initialize();
    if (command === 'run') {
      const applied = await runPendingMigrations(dataSource, config.databaseDirectUrl);
      process.stderr.write(`applied ${applied.length} migration(s)\n`);
    } else {
      await dataSource.undoLastMigration();
      process.stderr.write('reverted the last migration\n');
    }
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await server.onApplicationShutdown();
  }
}

try {
  await main(process.argv[2]);
} catch (error) {
  process.stderr.write(`migration: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
