import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The advisory lock appends to the chain take (pg_advisory_xact_lock): "PlantA". */
const CHAIN_LOCK_KEY = 0x506c616e7441;

/**
 * The audit trail as a hash chain (docs/operations/security.md, "The audit trail"): each
 * row of `audit_events` carries `previous_hash`, the hash of the row before it (32 zero
 * bytes for the first), and `hash`, SHA-256 over `previous_hash` and the row's canonical
 * form (audit_event_hash below; src/audit/chain/audit-chain.ts computes the same).
 *
 * A BEFORE INSERT trigger chains every row, whoever writes it (this release, the release
 * before it during a rollout, a person with psql): under one advisory lock held until the
 * transaction ends, it gives the row the id after the last one, the last row's hash, and a
 * time no earlier than the last row's, and computes its hash. So the chain has no fork and
 * no gap, ids follow commit order, and the inserter can forge none of them. The functions
 * belong to the owner and carry their search_path (the schema's tables, pg_temp last), so
 * a session's own search_path or temporary objects cannot replace what they call.
 *
 * Two owner-only maintenance paths, each set by `plant_store.audit_maintenance` in the
 * owner's transaction: `archive` lets the owner DELETE the rows `npm run audit -- archive`
 * has written to its file; `restore` keeps a row that comes with its hash as it is (a
 * restore loading rows as they were; verify checks them). Any other role is refused as
 * before.
 *
 * Expand only: the columns are nullable (the trigger fills them for every writer), and
 * the existing rows are hashed in id order here, under the ADD COLUMN's lock (a few rows:
 * one per act of management).
 */
export class ChainAuditEvents1795888679849 implements MigrationInterface {
  name = 'ChainAuditEvents1795888679849';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'ALTER TABLE audit_events ADD COLUMN previous_hash bytea, ADD COLUMN hash bytea',
    );
    // The canonical form: each field as text, in this order, as a 4-byte big-endian length
    // and its UTF-8 bytes, or ff ff ff ff for NULL; the time in UTC to the microsecond.
    await queryRunner.query(`
      CREATE FUNCTION audit_event_hash(previous bytea, entry audit_events) RETURNS bytea
      LANGUAGE sql STABLE AS $$
        SELECT sha256(previous || string_agg(
          CASE WHEN value IS NULL THEN '\\xffffffff'::bytea
               ELSE int4send(length(convert_to(value, 'UTF8'))) || convert_to(value, 'UTF8') END,
          ''::bytea ORDER BY position))
        FROM unnest(ARRAY[
          entry.id::text,
          to_char(entry.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
          entry.event::text,
          entry.subject_type::text,
          entry.subject_id::text,
          entry.actor::text,
          entry.actor_token_id::text,
          entry.details::text
        ]) WITH ORDINALITY AS field(value, position)
      $$`);
    await queryRunner.query(`
      CREATE FUNCTION audit_events_chain() RETURNS trigger
      LANGUAGE plpgsql AS $$
      DECLARE
        latest audit_events;
      BEGIN
        IF NEW.hash IS NOT NULL
           AND current_setting('plant_store.audit_maintenance', true) = 'restore'
           AND pg_has_role(current_user, (SELECT relowner FROM pg_class WHERE oid = TG_RELID), 'MEMBER')
        THEN
          RETURN NEW;
        END IF;
        PERFORM pg_advisory_xact_lock(${CHAIN_LOCK_KEY});
        SELECT * INTO latest FROM audit_events ORDER BY id DESC LIMIT 1;
        IF FOUND THEN
          NEW.id := latest.id + 1;
          NEW.previous_hash := latest.hash;
          NEW.occurred_at := greatest(now(), latest.occurred_at);
        ELSE
          NEW.id := 1;
          NEW.previous_hash := decode(repeat('00', 32), 'hex');
          NEW.occurred_at := now();
        END IF;
        NEW.hash := audit_event_hash(NEW.previous_hash, NEW);
        RETURN NEW;
      END
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER audit_events_chain BEFORE INSERT ON audit_events
      FOR EACH ROW EXECUTE FUNCTION audit_events_chain()`);
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION audit_events_append_only() RETURNS trigger
      LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'DELETE'
           AND current_setting('plant_store.audit_maintenance', true) = 'archive'
           AND pg_has_role(current_user, (SELECT relowner FROM pg_class WHERE oid = TG_RELID), 'MEMBER')
        THEN
          RETURN NULL;
        END IF;
        RAISE EXCEPTION 'audit_events is append-only: % is refused', TG_OP
          USING ERRCODE = 'insufficient_privilege';
      END
      $$`);
    // Each function keeps this search_path, whatever the calling session's: PostgreSQL's
    // own functions first, then the schema's tables, temporary objects last. Set once they
    // exist: CREATE puts an object in the path's first schema.
    await queryRunner.query(
      `SELECT set_config('search_path', 'pg_catalog, ' || quote_ident(current_schema()) || ', pg_temp', true)`,
    );
    for (const signature of [
      'audit_event_hash(bytea, audit_events)',
      'audit_events_chain()',
      'audit_events_append_only()',
    ]) {
      await queryRunner.query(`ALTER FUNCTION ${signature} SET search_path FROM CURRENT`);
    }
    await queryRunner.query('ALTER TABLE audit_events DISABLE TRIGGER audit_events_append_only');
    await queryRunner.query(`
      DO $$
      DECLARE
        entry audit_events;
        previous bytea := decode(repeat('00', 32), 'hex');
      BEGIN
        FOR entry IN SELECT * FROM audit_events ORDER BY id LOOP
          UPDATE audit_events SET previous_hash = previous, hash = audit_event_hash(previous, entry)
          WHERE id = entry.id
          RETURNING hash INTO previous;
        END LOOP;
      END
      $$`);
    await queryRunner.query('ALTER TABLE audit_events ENABLE TRIGGER audit_events_append_only');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TRIGGER audit_events_chain ON audit_events');
    await queryRunner.query('DROP FUNCTION audit_events_chain()');
    await queryRunner.query('DROP FUNCTION audit_event_hash(bytea, audit_events)');
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'audit_events is append-only: % is refused', TG_OP
          USING ERRCODE = 'insufficient_privilege';
      END
      $$`);
    await queryRunner.query('ALTER TABLE audit_events DROP COLUMN hash, DROP COLUMN previous_hash');
  }
}
