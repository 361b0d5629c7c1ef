import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently } from '../src/database/concurrent-index.js';

/**
 * GET /plants?tag=… reads one tag's plants in id order: this index holds them so. Built
 * concurrently, outside a transaction, so that creates go on while it builds (docs/
 * extending.md, "Changing the schema"). Databases that applied this migration when it
 * built the index in a transaction do not run it again; the index is the same.
 */
export class IndexPlantsByTag1763800000000 implements MigrationInterface {
  name = 'IndexPlantsByTag1763800000000';
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    await createIndexConcurrently(queryRunner, 'plants_tag_id_idx', 'plants (tag, id)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX CONCURRENTLY IF EXISTS plants_tag_id_idx');
  }
}
