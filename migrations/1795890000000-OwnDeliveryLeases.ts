import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Which process holds a delivery's lease: a claim writes its process's id, recording the
 * outcome clears it. A worker whose statement failed does not know whether its last claim
 * committed (the answer goes with the connection, in a failover say); once the database
 * answers again it releases the leases it holds on deliveries it is not sending, which
 * otherwise waited out the lease (40 s by default). Nullable without a default: adding it
 * rewrites no row. A release before this one neither writes nor reads it: during a
 * rollout its claim leaves the column as it was, so a process of this release back after
 * an outage longer than the lease could end a lease that replica took after its own ran
 * out, and the delivery go out twice at once; at least once still holds.
 */
export class OwnDeliveryLeases1795890000000 implements MigrationInterface {
  name = 'OwnDeliveryLeases1795890000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE webhook_deliveries ADD COLUMN lease_owner uuid');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE webhook_deliveries DROP COLUMN lease_owner');
  }
}
