import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently } from '../src/database/concurrent-index.js';

/**
 * The retention sweep's one question: which delivered or failed deliveries were created
 * before a time, oldest first. Pending ones stay out of the index (they are never
 * removed), so a delivery enters it once, when it is settled. Built concurrently, outside
 * a transaction, so that deliveries go on being written meanwhile; it can be run again. A
 * release before this one never reads it.
 */
export class IndexSettledDeliveries1795888513473 implements MigrationInterface {
  name = 'IndexSettledDeliveries1795888513473';
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    await createIndexConcurrently(
      queryRunner,
      'webhook_deliveries_settled_idx',
      "webhook_deliveries (created_at) WHERE status <> 'pending'",
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX CONCURRENTLY IF EXISTS webhook_deliveries_settled_idx');
  }
}
