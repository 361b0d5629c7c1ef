import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../src/config/app-config.js';
import { dataSourceOptions, MIGRATIONS } from '../../src/database/data-source.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

describe('migrations', () => {
  let database: TestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await new DataSource(
      dataSourceOptions(database.url, AppConfig.fromEnvironment({})),
    ).initialize();
  });
  afterAll(async () => {
    await dataSource.destroy();
    await database.drop();
  });

  it('build exactly the schema the entities describe', async () => {
    await dataSource.runMigrations();
    const pending = await dataSource.driver.createSchemaBuilder().log();
    expect(pending.upQueries.map((query) => query.query)).toEqual([]);
  });

  it('revert completely and apply again', async () => {
    for (const _ of MIGRATIONS) await dataSource.undoLastMigration();
    expect(await database.query("SELECT to_regclass('plants') AS plants")).toEqual([
      { plants: null },
    ]);
    expect(await dataSource.runMigrations()).toHaveLength(MIGRATIONS.length);
  });
});
