import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every delivery is updated once (pending → delivered or failed: a dead row version, not
 * a HOT update, since status is indexed) and removed by the retention sweep after
 * WEBHOOK_DELIVERY_RETENTION, so the table turns over whole every 30 days. PostgreSQL's
 * default waits for 20 % of a table's rows to be dead before vacuuming it: at 100 creates
 * a second and two subscribers, a month of deliveries is 518 million rows, and 100
 * million dead ones before each vacuum. Dead versions not yet vacuumed take room new
 * rows cannot reuse: 414 bytes per delivery against 240 with vacuum keeping up
 * (docs/operations/database.md, Sizing). At 1 % the table is vacuumed every few hours of
 * such traffic, and analysed as often. Only catalog options change (SHARE UPDATE
 * EXCLUSIVE: reads and writes go on).
 */
export class VacuumDeliveriesOften1795889500001 implements MigrationInterface {
  name = 'VacuumDeliveriesOften1795889500001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE webhook_deliveries SET (autovacuum_vacuum_scale_factor = 0.01,
         autovacuum_vacuum_insert_scale_factor = 0.01, autovacuum_analyze_scale_factor = 0.01)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE webhook_deliveries RESET (autovacuum_vacuum_scale_factor,
         autovacuum_vacuum_insert_scale_factor, autovacuum_analyze_scale_factor)`,
    );
  }
}
