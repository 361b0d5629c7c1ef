import pg from 'pg';
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { APP_SCHEMA } from '../../src/app.schema.js';
import { AppConfig } from '../../src/config/app-config.js';
import { dataSourceOptions } from '../../src/database/data-source.js';
import type { DatabaseSchema } from '../../src/database/database-schema.js';
import { runPendingMigrations } from '../../src/database/migrations.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

const LOCK_TIMEOUT_MS = 500;
const config = AppConfig.fromEnvironment({ MIGRATION_LOCK_TIMEOUT_MS: String(LOCK_TIMEOUT_MS) });
/** Far below the blocker's hold, far above the lock time-out on a busy machine. */
const GIVES_UP_WITHIN_MS = 4_000;

/** An expand step on the busiest table: it needs ACCESS EXCLUSIVE, for an instant. */
class AddPlantsColour1799000000000 implements MigrationInterface {
  name = 'AddPlantsColour1799000000000';
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE plants ADD COLUMN colour text');
  }
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE plants DROP COLUMN colour');
  }
}

/** Reads the settings of the session that runs it. */
class ReadSessionSettings1799000000001 implements MigrationInterface {
  static seen: unknown;
  async up(queryRunner: QueryRunner): Promise<void> {
    [ReadSessionSettings1799000000001.seen] = await queryRunner.query(
      `SELECT current_setting('lock_timeout') AS lock_timeout,
              current_setting('statement_timeout') AS statement_timeout,
              current_setting('application_name') AS application_name`,
    );
  }
  async down(): Promise<void> {}
}

const [createPlants, indexPlantsByTag] = APP_SCHEMA.migrations;

describe('a migration behind a lock on plants (MIGRATION_LOCK_TIMEOUT_MS)', () => {
  let database: TestDatabase;
  let blocker: pg.Client;

  const migrate = (migrations: DatabaseSchema['migrations']) =>
    runPendingMigrations(
      dataSourceOptions(database.migrationUrl, config, {
        entities: APP_SCHEMA.entities,
        migrations,
      }),
      config,
    );
  const applied = async () =>
    (await database.query<{ name: string }>('SELECT name FROM migrations ORDER BY id')).map(
      ({ name }) => name,
    );

  beforeEach(async () => {
    database = await createTestDatabase();
    blocker = new pg.Client({ connectionString: database.adminUrl });
    await blocker.connect();
  });
  afterEach(async () => {
    await blocker.end();
    await database.drop();
  });

  it("runs with the lock time-out and without the service's statement time-out", async () => {
    await migrate([createPlants, ReadSessionSettings1799000000001]);
    expect(ReadSessionSettings1799000000001.seen).toEqual({
      lock_timeout: `${LOCK_TIMEOUT_MS}ms`,
      statement_timeout: '0',
      application_name: 'plant-store migrations',
    });
  });

  it('gives up after the lock time-out, rolled back, while traffic behind it waits no longer; then applies once the lock is gone', async () => {
    await migrate(APP_SCHEMA.migrations);
    // A long read transaction: its ACCESS SHARE lock keeps any ALTER TABLE waiting.
    await blocker.query('BEGIN');
    await blocker.query('SELECT count(*) FROM plants');

    const started = Date.now();
    const migrating = migrate([...APP_SCHEMA.migrations, AddPlantsColour1799000000000]);
    const failure = migrating.catch((error: Error) => error);
    // A create arriving meanwhile queues behind the migration's lock request.
    const writer = new pg.Client({ connectionString: database.adminUrl });
    await writer.connect();
    try {
      await new Promise((resolve) => setTimeout(resolve, LOCK_TIMEOUT_MS / 5));
      await writer.query("INSERT INTO plants (id, name) VALUES (1, 'Fern')");
      const createdAfterMs = Date.now() - started;

      const error = await failure;
      const failedAfterMs = Date.now() - started;
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toBe(
        `migration AddPlantsColour1799000000000 gave up after waiting ${LOCK_TIMEOUT_MS} ms ` +
          '(MIGRATION_LOCK_TIMEOUT_MS) for a lock that another session holds, a long ' +
          'transaction or traffic on the same table; its transaction was rolled back, and ' +
          'it is not recorded as applied: run the migrations again, at a quieter time or ' +
          'with a longer MIGRATION_LOCK_TIMEOUT_MS',
      );
      expect(failedAfterMs).toBeGreaterThanOrEqual(LOCK_TIMEOUT_MS);
      expect(failedAfterMs).toBeLessThan(GIVES_UP_WITHIN_MS);
      expect(createdAfterMs).toBeLessThan(GIVES_UP_WITHIN_MS);
    } finally {
      await writer.end();
    }
    expect(
      await database.query(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'plants' AND column_name = 'colour'",
      ),
    ).toEqual([]);
    expect(await applied()).toEqual(APP_SCHEMA.migrations.map(({ name }) => name));

    await blocker.query('COMMIT');
    expect(
      (await migrate([...APP_SCHEMA.migrations, AddPlantsColour1799000000000])).map(
        ({ name }) => name,
      ),
    ).toEqual(['AddPlantsColour1799000000000']);
    expect(await database.query('SELECT id, colour FROM plants')).toEqual([
      { id: '1', colour: null },
    ]);
  });

  it('gives up building IndexPlantsByTag concurrently behind an open write, and builds it when run again', async () => {
    await migrate([createPlants]);
    // A create whose transaction is still open: a concurrent build waits for it to end.
    await blocker.query('BEGIN');
    await blocker.query("INSERT INTO plants (id, name, tag) VALUES (1, 'Fern', 'green')");

    const started = Date.now();
    const error = await migrate([createPlants, indexPlantsByTag]).catch((failed: Error) => failed);
    expect((error as Error).message).toMatch(
      new RegExp(
        `^migration IndexPlantsByTag1763800000000 gave up after waiting ${LOCK_TIMEOUT_MS} ms .*; ` +
          'it runs without a transaction and is written to be run again, and it is not recorded as applied',
      ),
    );
    expect(Date.now() - started).toBeLessThan(GIVES_UP_WITHIN_MS);
    expect(await applied()).toEqual([createPlants.name]);
    const indexValidity = () =>
      database.query<{ valid: boolean }>(
        "SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = to_regclass('plants_tag_id_idx')",
      );
    // The interrupted build leaves an invalid index, which queries ignore.
    expect(await indexValidity()).toEqual([{ valid: false }]);

    await blocker.query('COMMIT');
    expect((await migrate([createPlants, indexPlantsByTag])).map(({ name }) => name)).toEqual([
      indexPlantsByTag.name,
    ]);
    expect(await indexValidity()).toEqual([{ valid: true }]);
  });
});
