import { createHash } from 'node:crypto';

/** What the first row chains from: 32 zero bytes. */
export const GENESIS_HASH = Buffer.alloc(32);

/**
 * The advisory lock ("PlantA") under which the database's trigger appends a row, held
 * until the appending transaction ends; taken too by what must see the chain's end
 * unchanged until it commits (an archive, a record made once by one replica).
 */
export const AUDIT_CHAIN_LOCK_KEY = 0x506c616e7441;

/** A row of `audit_events` as the chain hashes it: each field as its canonical text. */
export interface ChainedAuditEvent {
  /** Decimal. */
  id: string;
  /** UTC to the microsecond, `2026-11-27T10:04:31.198042Z`. */
  occurredAt: string;
  event: string;
  subjectType: string;
  subjectId: string;
  actor: string;
  /** Lower-case, with hyphens; null for the CLI. */
  actorTokenId: string | null;
  /** The JSON text exactly as PostgreSQL writes the jsonb (`details::text`). */
  details: string;
  /** Null only on a row written around the trigger. */
  previousHash: Buffer | null;
  hash: Buffer | null;
}

/** NULL in the canonical form: a length no field can have. */
const NULL_FIELD = Buffer.from([0xff, 0xff, 0xff, 0xff]);

function field(value: string | null): Buffer {
  if (value === null) return NULL_FIELD;
  const bytes = Buffer.from(value, 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

/**
 * The row's canonical form, as the database's `audit_event_hash` builds it: the eight
 * fields in table order (id, occurred_at, event, subject_type, subject_id, actor,
 * actor_token_id, details), each as a 4-byte big-endian length and its UTF-8 bytes, or
 * ff ff ff ff for NULL. Length-prefixed, so no two rows share one.
 */
export function canonicalForm(event: ChainedAuditEvent): Buffer {
  return Buffer.concat(
    [
      event.id,
      event.occurredAt,
      event.event,
      event.subjectType,
      event.subjectId,
      event.actor,
      event.actorTokenId,
      event.details,
    ].map(field),
  );
}

/** A hash as people copy it: lower-case hex. */
export const hex = (hash: Buffer): string => hash.toString('hex');

/** SHA-256 over the previous row's hash and the row's canonical form: what `hash` must be. */
export function chainHash(previousHash: Buffer, event: ChainedAuditEvent): Buffer {
  return createHash('sha256').update(previousHash).update(canonicalForm(event)).digest();
}
