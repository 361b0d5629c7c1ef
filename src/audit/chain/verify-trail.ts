import type pg from 'pg';
import { chainedEvents, clientQuery, tableOrigin } from '../audit-events.repository.js';
import { type ChainedAuditEvent, hex } from './audit-chain.js';
import { type ArchiveHeader, ArchiveFileError, readArchive } from './archive-file.js';
import { type ChainOrigin, ChainVerifier, GENESIS } from './chain-verifier.js';

/** What verify found: the chain whole, with its ends, or its first break. */
export type TrailVerdict =
  | {
      whole: true;
      rows: number;
      /** Of `rows`, those in the archives given. */
      archivedRows: number;
      firstId: string | undefined;
      origin: ChainOrigin;
      last: ChainOrigin;
      /** Checkpoints of rows before the first checked, which an archive would prove. */
      unchecked: string[];
    }
  | { whole: false; problem: string };

/** A hash kept elsewhere for a row: `ID:HASH`, as verify prints the last row. */
export type Checkpoints = ReadonlyMap<string, Buffer>;

export interface VerifyOptions {
  /** Archive files (`npm run audit -- archive`), oldest first, that the table goes on from. */
  archives?: string[];
  checkpoints?: Checkpoints;
}

/**
 * Walks the whole chain, a row at a time: the archives given, then `audit_events` in one
 * REPEATABLE READ, READ ONLY snapshot, a batch of rows at a time. It begins where the
 * first archive does, or, with none, where the table does (the genesis, or the last row
 * the latest archive took away); each archive must go on from the one before, and the
 * table from the last. Answers the first break, or the chain's ends. Read-only: the
 * service's role may run it.
 */
export async function verifyTrail(
  client: pg.ClientBase,
  { archives = [], checkpoints = new Map() }: VerifyOptions = {},
): Promise<TrailVerdict> {
  let verifier: ChainVerifier | undefined;
  for (const file of archives) {
    try {
      const { header, rows } = await readArchive(file);
      verifier ??= new ChainVerifier(archiveOrigin(header), checkpoints);
      const problem = await walk(rows, verifier);
      if (problem) return { whole: false, problem: `${file}: ${problem}` };
    } catch (error) {
      if (error instanceof ArchiveFileError) return { whole: false, problem: error.message };
      throw error;
    }
  }
  const archivedRows = verifier?.rows ?? 0;
  const query = clientQuery(client);
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  try {
    verifier ??= new ChainVerifier(await tableOrigin(query), checkpoints);
    const problem = await walk(chainedEvents(query), verifier);
    return problem ? { whole: false, problem } : unmetCheckpoints(verifier, archivedRows);
  } finally {
    await client.query('ROLLBACK');
  }
}

/** What an archive's first row chains from, as its header says. */
function archiveOrigin({ previousHash, firstId }: ArchiveHeader): ChainOrigin {
  const hash = Buffer.from(previousHash, 'hex');
  return hash.equals(GENESIS.hash) ? GENESIS : { hash, throughId: BigInt(firstId) - 1n };
}

/** The first break among `rows`, or undefined. */
async function walk(
  rows: AsyncIterable<ChainedAuditEvent>,
  verifier: ChainVerifier,
): Promise<string | undefined> {
  for await (const row of rows) {
    const problem = verifier.check(row);
    if (problem) return problem;
  }
  return undefined;
}

/**
 * A checkpoint of a row before the table's first is archived: an archive would prove it.
 * One past the last row means rows the trail once had are gone (a restore brought it back
 * to an earlier state).
 */
function unmetCheckpoints(verifier: ChainVerifier, archivedRows: number): TrailVerdict {
  const { last, firstId, origin } = verifier;
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
  return { whole: true, rows: verifier.rows, archivedRows, firstId, origin, last, unchecked };
}
