import { readFileSync } from 'node:fs';
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { describe, expect, it } from 'vitest';
import { APP_SCHEMA } from '../../src/app.schema.js';
import { AppConfig } from '../../src/config/app-config.js';
import { migrationSessionSettings } from '../../src/database/migrations.js';
import { EXCEPTIONS_FILE, lintMigrations } from '../../scripts/lint-migrations.mjs';

const sessionSettings = migrationSessionSettings(AppConfig.fromEnvironment({}));

/** A migration whose up runs `upSql` and whose down undoes it as `downSql` says. */
function planted(name: string, upSql: string, downSql: string, transaction?: false) {
  return class implements MigrationInterface {
    name = name;
    transaction = transaction;
    async up(queryRunner: QueryRunner): Promise<void> {
      await queryRunner.query(upSql);
    }
    async down(queryRunner: QueryRunner): Promise<void> {
      await queryRunner.query(downSql);
    }
  };
}

const lint = (migrations: unknown[], exceptions: unknown[] = []) =>
  lintMigrations(migrations, { sessionSettings, exceptions });

describe('the migration linter (npm run lint:migrations)', () => {
  it('passes the migrations the service runs, with the exceptions recorded for them', async () => {
    const exceptions = JSON.parse(readFileSync(EXCEPTIONS_FILE, 'utf8'));
    const { passed, report } = await lint(APP_SCHEMA.migrations, exceptions);
    expect(report).toMatch(/no finding/);
    expect(passed).toBe(true);
  });

  it("flags an index built in a transaction, which blocks the table's writes meanwhile", async () => {
    const { passed, report } = await lint([
      planted(
        'IndexPlantsByTag1799000000000',
        'CREATE INDEX plants_tag_id_idx ON plants (tag, id)',
        'DROP INDEX plants_tag_id_idx',
      ),
    ]);
    expect(passed).toBe(false);
    expect(report).toContain('IndexPlantsByTag1799000000000 up: require-concurrent-index-creation');
    expect(report).toContain(
      'IndexPlantsByTag1799000000000 down: require-concurrent-index-deletion',
    );
  });

  it('flags a NOT NULL column without a default, which the previous release does not write', async () => {
    const { passed, report } = await lint([
      planted(
        'AddPlantsColour1799000000000',
        'ALTER TABLE plants ADD COLUMN colour text NOT NULL',
        'ALTER TABLE plants DROP COLUMN colour',
      ),
    ]);
    expect(passed).toBe(false);
    expect(report).toContain('AddPlantsColour1799000000000 up: adding-required-field');
  });

  it('flags CONCURRENTLY in a migration that runs in a transaction, where PostgreSQL refuses it', async () => {
    const { passed, report } = await lint([
      planted(
        'IndexPlantsByName1799000000000',
        'CREATE INDEX CONCURRENTLY IF NOT EXISTS plants_name_idx ON plants (name)',
        'DROP INDEX CONCURRENTLY IF EXISTS plants_name_idx',
      ),
    ]);
    expect(passed).toBe(false);
    expect(report).toContain(
      'IndexPlantsByName1799000000000 up: ban-concurrent-index-creation-in-transaction',
    );
  });

  /** docs/extending.md, "Adding a value to an enum": the constraint replaced NOT VALID, then validated. */
  class AddMowToCareSchedules implements MigrationInterface {
    name = 'AddMowToCareSchedules1799000000000';
    transaction = false as const;
    constructor(private readonly notValid = ' NOT VALID') {}
    async up(queryRunner: QueryRunner): Promise<void> {
      await queryRunner.query(`
        ALTER TABLE care_schedules DROP CONSTRAINT IF EXISTS care_schedules_kind_check,
          ADD CONSTRAINT care_schedules_kind_check
            CHECK (kind IN ('water', 'feed', 'prune', 'repot', 'mow'))${this.notValid}`);
      await queryRunner.query(
        'ALTER TABLE care_schedules VALIDATE CONSTRAINT care_schedules_kind_check',
      );
    }
    async down(queryRunner: QueryRunner): Promise<void> {
      await queryRunner.query(`
        ALTER TABLE care_schedules DROP CONSTRAINT IF EXISTS care_schedules_kind_check,
          ADD CONSTRAINT care_schedules_kind_check
            CHECK (kind IN ('water', 'feed', 'prune', 'repot')) NOT VALID`);
    }
  }

  it("passes a value added to an enum's CHECK as docs/extending.md writes it, and flags the CHECK added without NOT VALID", async () => {
    const widened = await lint([AddMowToCareSchedules]);
    expect(widened.report).toMatch(/no finding/);
    expect(widened.passed).toBe(true);
    const { passed, report } = await lint([
      class extends AddMowToCareSchedules {
        constructor() {
          super('');
        }
      },
    ]);
    expect(passed).toBe(false);
    expect(report).toContain('AddMowToCareSchedules1799000000000 up: constraint-missing-not-valid');
  });

  it('passes the expand steps: a nullable column, and an index built concurrently outside a transaction', async () => {
    const { passed, report } = await lint([
      planted(
        'AddPlantsColour1799000000000',
        'ALTER TABLE plants ADD COLUMN colour text',
        'ALTER TABLE plants DROP COLUMN colour',
      ),
      planted(
        'IndexPlantsByName1799000000001',
        'CREATE INDEX CONCURRENTLY IF NOT EXISTS plants_name_idx ON plants (name)',
        'DROP INDEX CONCURRENTLY IF EXISTS plants_name_idx',
        false,
      ),
    ]);
    expect(report).toMatch(/2 migration\(s\), up and down: no finding/);
    expect(passed).toBe(true);
  });

  it('excuses a finding only by a recorded exception, and fails an exception that excuses nothing', async () => {
    const migration = planted(
      'IndexTinyTable1799000000000',
      'CREATE INDEX plants_tag_id_idx ON plants (tag, id)',
      'DROP INDEX CONCURRENTLY IF EXISTS plants_tag_id_idx',
    );
    const exception = {
      migration: 'IndexTinyTable1799000000000',
      direction: 'up',
      rule: 'require-concurrent-index-creation',
      reason: 'a test',
    };
    expect((await lint([migration], [exception])).passed).toBe(true);
    const stale = await lint([migration], [exception, { ...exception, rule: 'ban-drop-column' }]);
    expect(stale.passed).toBe(false);
    expect(stale.report).toContain(
      'IndexTinyTable1799000000000 up: the exception for ban-drop-column excuses nothing any more',
    );
  });

  it('refuses a migration that uses more of the QueryRunner than query()', async () => {
    class DropsByApi implements MigrationInterface {
      async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.dropColumn('plants', 'tag');
      }
      async down(): Promise<void> {}
    }
    await expect(lint([DropsByApi])).rejects.toThrow(
      'DropsByApi.up uses queryRunner.dropColumn: the migration linter records only queryRunner.query()',
    );
  });
});
