import 'reflect-metadata';
import { APP_SCHEMA } from '../app.schema.js';
import { AppConfig } from '../config/app-config.js';
import { dataSourceOptions } from '../database/data-source.js';
import { DatabaseServer } from '../database/database-server.js';
import { revertLastMigration, runPendingMigrations } from '../database/migrations.js';

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
  const service = dataSourceOptions(server.url, config, APP_SCHEMA);
  try {
    if (command === 'run') {
      const applied = await runPendingMigrations(service, config);
      process.stderr.write(`applied ${applied.length} migration(s)\n`);
    } else {
      const reverted = await revertLastMigration(service, config);
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
