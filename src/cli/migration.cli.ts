import './compile-cache.js';
import 'reflect-metadata';
import { APP_SCHEMA } from '../app.schema.js';
import { AppConfig } from '../config/app-config.js';
import { dataSourceOptions } from '../database/data-source.js';
import { DatabaseServer } from '../database/database-server.js';
import {
  migrationSettings,
  revertLastMigration,
  runPendingMigrations,
} from '../database/migrations.js';

/**
 * `npm run migration:run` / `migration:revert`: the service runs pending migrations at
 * start; this runs them (or reverts the last one) on their own, on either database, as
 * DATABASE_MIGRATION_URL's role when it is set (which then grants DATABASE_URL's role
 * what the service needs).
 */
async function main(command: string | undefined): Promise<void> {
  if (command !== 'run' && command !== 'revert') {
    throw new Error('usage: migration.cli.js run|revert');
  }
  const config = AppConfig.fromEnvironment();
  const server = await DatabaseServer.connect(config);
  const service = dataSourceOptions(server.url, config, APP_SCHEMA);
  const settings = migrationSettings(config, server, APP_SCHEMA);
  try {
    if (command === 'run') {
      const applied = await runPendingMigrations(service, settings);
      const granted = settings.grant
        ? `; granted role "${settings.grant.role}" the service's rights`
        : '';
      process.stderr.write(`applied ${applied.length} migration(s)${granted}\n`);
    } else {
      const reverted = await revertLastMigration(service, settings);
      process.stderr.write(reverted ? `reverted ${reverted}\n` : 'no migration to revert\n');
    }
  } finally {
    await server.onApplicationShutdown();
  }
}

try {
  await main(process.argv[2]);
} catch (error) {
  process.stderr.write(`migration: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
