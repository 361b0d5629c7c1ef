import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../src/config/app-config.js';
import { dataSourceOptions, MIGRATIONS } from '../../src/database/data-source.js';
import { runPendingMigrations } from '../../src/database/migrations.js';
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

describe('migrations run by several processes at once', () => {
  const PROCESSES = 4;
  let database: TestDatabase;
  let dataSources: DataSource[];

  beforeAll(async () => {
    database = await createTestDatabase();
    const options = dataSourceOptions(database.url, AppConfig.fromEnvironment({}));
    dataSources = await Promise.all(
      Array.from({ length: PROCESSES }, () => new DataSource(options).initialize()),
    );
  });
  afterAll(async () => {
    await Promise.all(dataSources.map((dataSource) => dataSource.destroy()));
    await database.drop();
  });

  it('apply each migration once, one runner at a time, and every runner succeeds', async () => {
    const applied = await Promise.all(
      dataSources.map((dataSource) => runPendingMigrations(dataSource, undefined)),
    );
    expect(applied.flat().map(({ name }) => name)).toEqual(MIGRATIONS.map(({ name }) => name));
    const rows = await database.query<{ name: string }>('SELECT name FROM migrations');
    expect(rows).toHaveLength(MIGRATIONS.length);
  });
});
