import { DataSource } from 'typeorm';
import { APP_SCHEMA } from '../app.schema.js';
import { AppConfig } from '../config/app-config.js';
import { dataSourceOptions } from '../database/data-source.js';

const config = AppConfig.fromEnvironment();

/**
 * The data source the TypeORM CLI loads (`npm run migration:generate`); it needs
 * DATABASE_URL, and DATABASE_MIGRATION_URL where another role owns the tables.
 */
export default new DataSource(
  dataSourceOptions(config.databaseMigrationUrl ?? config.databaseUrl ?? '', config, APP_SCHEMA),
);
