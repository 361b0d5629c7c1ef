import type { MigrationInterface, QueryRunner } from 'typeorm';

/** GET /plants?tag=… reads one tag's plants in id order: this index holds them so. */
export class IndexPlantsByTag1763800000000 implements MigrationInterface {
  name = 'IndexPlantsByTag1763800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('CREATE INDEX plants_tag_id_idx ON plants (tag, id)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX plants_tag_id_idx');
  }
}
