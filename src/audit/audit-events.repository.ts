import type pg from 'pg';
import type { EntityManager } from 'typeorm';
import { describeActor } from './actor.js';
import { type AuditEventName, type AuditRecord, subjectTypeOf } from './audit-record.js';
import { AUDIT_CHAIN_LOCK_KEY, type ChainedAuditEvent } from './chain/audit-chain.js';
import { type ChainOrigin, GENESIS } from './chain/chain-verifier.js';

/**
 * A statement in the caller's transaction, answering its rows: a TypeORM manager's (the
 * service, the token CLI) or a `pg` client's (the commands that run without Nest).
 */
export type SqlQuery = <Row>(sql: string, parameters?: unknown[]) => Promise<Row[]>;

export const managerQuery =
  (manager: EntityManager): SqlQuery =>
  (sql, parameters) =>
    manager.query(sql, parameters);

export const clientQuery =
  (client: pg.ClientBase): SqlQuery =>
  async <Row>(sql: string, parameters?: unknown[]) =>
    (await client.query(sql, parameters)).rows as Row[];

/**
 * A row as the chain hashes it (ChainedAuditEvent): each field as its canonical text. Its
 * `id` is text, so order by `audit_events.id`: `ORDER BY id` would sort the text.
 */
const CHAINED_COLUMNS = `
  id::text AS id,
  to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "occurredAt",
  event, subject_type AS "subjectType", subject_id AS "subjectId", actor,
  actor_token_id::text AS "actorTokenId", details::text AS details,
  previous_hash AS "previousHash", hash`;

/** The subject of `audit_trail.archived`, whose latest record says where the table's chain begins. */
export const ARCHIVED_SUBJECT_ID = 'audit_events';

/**
 * Appends `record` in the caller's transaction. The database's trigger gives it its id,
 * time and hashes (migrations/1795888679849-ChainAuditEvents.ts): answered as stored.
 */
export async function appendAuditEvent(
  query: SqlQuery,
  { event, subjectId, actor, details = {} }: AuditRecord,
): Promise<ChainedAuditEvent> {
  const [appended] = await query<ChainedAuditEvent>(
    `INSERT INTO audit_events (event, subject_type, subject_id, actor, actor_token_id, details)
     VALUES ($1, $2, $3, $4, $5, $6::jsonb) RETURNING ${CHAINED_COLUMNS}`,
    [
      event,
      subjectTypeOf(event),
      subjectId,
      describeActor(actor),
      actor.kind === 'token' ? actor.tokenId : null,
      JSON.stringify(details),
    ],
  );
  return appended;
}

/**
 * Holds the chain's end until the caller's transaction ends: no row is appended meanwhile
 * but by this transaction (the trigger takes the same lock, which a session may hold twice).
 */
export async function lockChain(query: SqlQuery): Promise<void> {
  await query('SELECT pg_advisory_xact_lock($1)', [AUDIT_CHAIN_LOCK_KEY]);
}

/** The details of the latest `event` about `subjectId`, through the subject's index. */
export async function latestDetails(
  query: SqlQuery,
  event: AuditEventName,
  subjectId: string,
): Promise<Record<string, unknown> | undefined> {
  const [latest] = await query<{ details: Record<string, unknown> }>(
    `SELECT details FROM audit_events
     WHERE subject_type = $1 AND subject_id = $2 AND event = $3
     ORDER BY occurred_at DESC, id DESC LIMIT 1`,
    [subjectTypeOf(event), subjectId, event],
  );
  return latest?.details;
}

/** Whether the trail has no row: a new database, which nothing has been done to yet. */
export async function trailIsEmpty(query: SqlQuery): Promise<boolean> {
  const [{ empty }] = await query<{ empty: boolean }>(
    'SELECT NOT EXISTS (SELECT FROM audit_events) AS empty',
  );
  return empty;
}

/**
 * Where the table's chain begins: after the last row the latest archive took away (its
 * `audit_trail.archived` row says which, and with what hash), or at the genesis.
 */
export async function tableOrigin(query: SqlQuery): Promise<ChainOrigin> {
  const archived = await latestDetails(query, 'audit_trail.archived', ARCHIVED_SUBJECT_ID);
  if (!archived) return GENESIS;
  return {
    hash: Buffer.from(String(archived.lastHash), 'hex'),
    throughId: BigInt(String(archived.lastId)),
  };
}

/**
 * The table's rows in id order, from after `afterId` through `throughId` (each unbounded
 * when undefined), `batch` at a time: memory stays bounded however many there are. Run
 * it in one REPEATABLE READ transaction for one snapshot of the whole table.
 */
export async function* chainedEvents(
  query: SqlQuery,
  { afterId, throughId }: { afterId?: string; throughId?: string } = {},
  batch = 1_000,
): AsyncGenerator<ChainedAuditEvent> {
  let after = afterId ?? null;
  for (;;) {
    const rows = await query<ChainedAuditEvent>(
      `SELECT ${CHAINED_COLUMNS} FROM audit_events
       WHERE ($1::bigint IS NULL OR id > $1) AND ($2::bigint IS NULL OR id <= $2)
       ORDER BY audit_events.id LIMIT $3`,
      [after, throughId ?? null, batch],
    );
    yield* rows;
    if (rows.length < batch) return;
    after = rows[rows.length - 1].id;
  }
}

/** The rows an archive before `before` takes. */
export interface ArchivableRows {
  firstId: string;
  lastId: string;
  rows: number;
}

/**
 * The rows from the first on that all occurred before `before`: the chain loses only its
 * beginning, so what stays still chains on from the archive's last row. Undefined when
 * the first row is not that old.
 */
export async function archivableRows(
  query: SqlQuery,
  before: Date,
): Promise<ArchivableRows | undefined> {
  const [found] = await query<ArchivableRows>(
    `SELECT min(id)::text AS "firstId", max(id)::text AS "lastId", count(*)::integer AS rows
     FROM audit_events
     WHERE id < coalesce((SELECT min(id) FROM audit_events WHERE occurred_at >= $1),
                         (SELECT max(id) + 1 FROM audit_events))`,
    [before],
  );
  return found.rows > 0 ? found : undefined;
}

/**
 * Deletes the rows `firstId` to `lastId`, which the owner's `archive` maintenance allows
 * (the append-only trigger refuses everyone else); answers how many went and the hash of
 * the last, for the caller to check against what it archived.
 */
export async function removeArchivedRows(
  query: SqlQuery,
  { firstId, lastId }: Pick<ArchivableRows, 'firstId' | 'lastId'>,
): Promise<{ rows: number; lastHash: Buffer | null }> {
  await query(`SELECT set_config('plant_store.audit_maintenance', 'archive', true)`);
  const [removed] = await query<{ rows: number; lastHash: Buffer | null }>(
    `WITH removed AS (DELETE FROM audit_events WHERE id BETWEEN $1 AND $2 RETURNING id, hash)
     SELECT count(*)::integer AS rows,
            (SELECT hash FROM removed ORDER BY id DESC LIMIT 1) AS "lastHash"
     FROM removed`,
    [firstId, lastId],
  );
  await query(`SELECT set_config('plant_store.audit_maintenance', '', true)`);
  return removed;
}
