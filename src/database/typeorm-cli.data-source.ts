import { DataSource } from 'typeorm';
import { dataSourceOptions } from './data-source.js';

/** The data source the TypeORM CLI loads (`npm run migration:generate`); it needs DATABASE_URL. */
export default new DataSource(dataSourceOptions(process.env.DATABASE_URL ?? ''));
