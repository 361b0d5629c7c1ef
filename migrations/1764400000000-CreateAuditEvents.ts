import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The audit trail of management (src/audit): one row per token created, rotated or
 * revoked and per webhook subscription created, deleted, enabled, redelivered or whose
 * secret was rotated. Append-only: the service owns the table, and an owner cannot be
 * denied UPDATE or DELETE by REVOKE, so a trigger refuses them (and TRUNCATE) for
 * everyone; a superuser can still drop the trigger, which is itself a visible act. The
 * subject is named, not referenced: a deleted subscription keeps its history.
 */
export class CreateAuditEvents1764400000000 implements MigrationInterface {
  name = 'CreateAuditEvents1764400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE audit_events (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        occurred_at timestamptz NOT NULL DEFAULT now(),
        event varchar(64) NOT NULL,
        subject_type varchar(32) NOT NULL,
        subject_id varchar(100) NOT NULL,
        actor varchar(300) NOT NULL,
        actor_token_id uuid,
        details jsonb NOT NULL DEFAULT '{}'
      )`);
    // An operator's usual question: what happened to this token or subscription.
    await queryRunner.query(`
      CREATE INDEX audit_events_subject_idx ON audit_events (subject_type, subject_id, occurred_at)`);
    await queryRunner.query(`
      CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'audit_events is append-only: % is refused', TG_OP
          USING ERRCODE = 'insufficient_privilege';
      END
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER audit_events_append_only
      BEFORE UPDATE OR DELETE OR TRUNCATE ON audit_events
      FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE audit_events');
    await queryRunner.query('DROP FUNCTION audit_events_append_only()');
  }
}
