import type pg from 'pg';
import { chainedEvents, clientQuery, tableOrigin } from '../audit-events.repository.js';
import { type ChainedAuditEvent, hex } from './audit-chain.js';
import { type ChainOrigin, ChainVerifier } from './chain-verifier.js';

/** What verify found: the chain whole, with its ends, or its first break. */
export type TrailVerdict =
  | {
      whole: true;
      rows: number;
      firstId: string | undefined;
      origin: ChainOrigin;
      last: ChainOrigin;
      /** Checkpoints of rows no longer in the table, which an archive would prove. */
      unchecked: string[];
    }
  | { whole: false; problem: string };

/** A hash kept elsewhere for a row: `ID:HASH`, as verify prints the last row. */
export type Checkpoints = ReadonlyMap<string, Buffer>;

/**
 * Walks the whole chain of `audit_events` in one REPEATABLE READ, READ ONLY snapshot, a
 * batch of rows at a time, from where it begins (the genesis, or the last row the latest
 * archive took away), and answers its first break or its ends. Read-only: the service's
 * role may run it.
 */
export async function verifyTrail(
  client: pg.ClientBase,
  checkpoints: Checkpoints = new Map(),
): Promise<TrailVerdict> {
  const query = clientQuery(client);
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  try {
    const origin = await tableOrigin(query);
    const verdict = await walk(chainedEvents(query), new ChainVerifier(origin, checkpoints));
    return verdict.whole ? unmetCheckpoints(verdict, origin) : verdict;
  } finally {
    await client.query('ROLLBACK');
  }
}

type Walked = { whole: true; verifier: ChainVerifier } | { whole: false; problem: string };

async function walk(
  rows: AsyncIterable<ChainedAuditEvent>,
  verifier: ChainVerifier,
): Promise<Walked> {
  for await (const row of rows) {
    const problem = verifier.check(row);
    if (problem) return { whole: false, problem };
  }
  return { whole: true, verifier };
}

/**
 * A checkpoint of a row before the table's first is archived: an archive would prove it.
 * One past the last row means rows the trail once had are gone (a restore brought it back
 * to an earlier state).
 */
function unmetCheckpoints(
  { verifier }: { verifier: ChainVerifier },
  origin: ChainOrigin,
): TrailVerdict {
  const { last, firstId } = verifier;
  const unchecked: string[] = [];
  for (const [id, hash] of verifier.unmetCheckpoints) {
    if (firstId !== undefined && BigInt(id) < BigInt(firstId)) {
      unchecked.push(id);
      continue;
    }
    const kept = `row ${id} (kept with hash ${hex(hash)}) is not in the trail`;
    return {
      whole: false,
      problem:
        last.throughId === undefined || BigInt(id) > last.throughId
          ? `${kept}, which ends ${last.throughId === undefined ? 'before any row' : `at row ${last.throughId}`}: rows were removed from its end (a restore?)`
          : `${kept}, whose rows go from ${firstId} to ${last.throughId}`,
    };
  }
  return { whole: true, rows: verifier.rows, firstId, origin, last, unchecked };
}
