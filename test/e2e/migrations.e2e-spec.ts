import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../src/config/app-config.js';
import { APP_SCHEMA } from '../../src/app.schema.js';
import { dataSourceOptions } from '../../src/database/data-source.js';
import { revertLastMigration, runPendingMigrations } from '../../src/database/migrations.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

describe('migrations', () => {
  let database: TestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await new DataSource(
      dataSourceOptions(database.migrationUrl, AppConfig.fromEnvironment({}), APP_SCHEMA),
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

  it('revert completely, the last first, and apply again', async () => {
    const config = AppConfig.fromEnvironment({});
    const reverted = [];
    for (const _ of APP_SCHEMA.migrations) {
      reverted.push(await revertLastMigration(dataSource.options, config));
    }
    expect(reverted).toEqual(APP_SCHEMA.migrations.map(({ name }) => name).reverse());
    expect(await revertLastMigration(dataSource.options, config)).toBeUndefined();
    expect(await database.query("SELECT to_regclass('plants') AS plants")).toEqual([
      { plants: null },
    ]);
    expect(await runPendingMigrations(dataSource.options, config)).toHaveLength(
      APP_SCHEMA.migrations.length,
    );
  });
});

describe('migrations run by several processes at once', () => {
  const PROCESSES = 4;
  let database: TestDatabase;
  let dataSources: DataSource[];

  beforeAll(async () => {
    database = await createTestDatabase();
    const options = dataSourceOptions(
      database.migrationUrl,
      AppConfig.fromEnvironment({}),
      APP_SCHEMA,
    );
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
      dataSources.map((dataSource) =>
        runPendingMigrations(dataSource.options, AppConfig.fromEnvironment({})),
      ),
    );
    expect(applied.flat().map(({ name }) => name)).toEqual(
      APP_SCHEMA.migrations.map(({ name }) => name),
    );
    const rows = await database.query<{ name: string }>('SELECT name FROM migrations');
    expect(rows).toHaveLength(APP_SCHEMA.migrations.length);
  });
});
