import { type ChainedAuditEvent, chainHash, GENESIS_HASH, hex } from './audit-chain.js';

/** Where a walk along the chain begins: the genesis, or the last row an archive took away. */
export interface ChainOrigin {
  hash: Buffer;
  /** The last archived row's id; undefined at the genesis. */
  throughId?: bigint;
}

export const GENESIS: ChainOrigin = { hash: GENESIS_HASH };

/** The row the walk stands on: what the next one must chain from. */
interface ChainLink {
  id: bigint;
  hash: Buffer;
  previousHash: Buffer;
  occurredAt: string;
}

/**
 * Walks the chain one row at a time, in id order, holding only the row before: as many
 * rows as there are, in constant memory. Each row must match its own hash, chain from the
 * row before (or from the origin), and be dated no earlier than it. Ids may skip only where
 * the link holds (a row rolled back before the chain began); a row whose predecessor is
 * gone shows as missing rows. `checkpoints` are hashes kept elsewhere (an earlier verify's
 * last row, a log line's `hash`): the row of that id must still have it.
 */
export class ChainVerifier {
  private link: ChainLink | undefined;
  private readonly unmet: Map<string, Buffer>;
  rows = 0;
  firstId: string | undefined;

  constructor(
    readonly origin: ChainOrigin,
    checkpoints: ReadonlyMap<string, Buffer> = new Map(),
  ) {
    this.unmet = new Map(checkpoints);
  }

  /** The last row checked, or the origin's: what a continuation must chain from. */
  get last(): ChainOrigin {
    return this.link ? { hash: this.link.hash, throughId: this.link.id } : this.origin;
  }

  /** The checkpoints no row checked so far had. */
  get unmetCheckpoints(): ReadonlyMap<string, Buffer> {
    return this.unmet;
  }

  /** What is wrong with `row`, in words that name it; undefined when it extends the chain. */
  check(row: ChainedAuditEvent): string | undefined {
    const problem = this.problemWith(row);
    if (problem) return problem;
    this.link = {
      id: BigInt(row.id),
      hash: row.hash!,
      previousHash: row.previousHash!,
      occurredAt: row.occurredAt,
    };
    this.firstId ??= row.id;
    this.rows++;
    return undefined;
  }

  private problemWith(row: ChainedAuditEvent): string | undefined {
    const { id, previousHash, hash } = row;
    if (previousHash === null || hash === null) {
      return `row ${id} has no hash: it was written with the chain's trigger disabled`;
    }
    if (!hash.equals(chainHash(previousHash, row))) {
      return `row ${id} does not match its hash: it was changed after it was written`;
    }
    const kept = this.unmet.get(id);
    if (kept && !kept.equals(hash)) {
      return `row ${id} has hash ${hex(hash)}, not the ${hex(kept)} kept for it: the chain was rewritten from there, or the id was used again (a restore?)`;
    }
    this.unmet.delete(id);
    const link = this.link;
    if (!link) return this.problemAtStart(BigInt(id), previousHash);
    if (BigInt(id) <= link.id) return `row ${id} comes after row ${link.id}: the ids go back`;
    if (!previousHash.equals(link.hash)) {
      if (previousHash.equals(link.previousHash)) {
        return `row ${id} forks the chain: it follows the same row as row ${link.id} (an id used again after a restore?)`;
      }
      const missing = missingRows(link.id, BigInt(id));
      return missing
        ? `${missing} missing: row ${id} does not chain from row ${link.id}`
        : `row ${id} does not chain from row ${link.id}: row ${link.id} was replaced or rehashed, or row ${id} was not written after it`;
    }
    if (row.occurredAt < link.occurredAt) {
      return `row ${id} is dated ${row.occurredAt}, before row ${link.id} (${link.occurredAt}): it was back-dated`;
    }
    return undefined;
  }

  private problemAtStart(id: bigint, previousHash: Buffer): string | undefined {
    if (previousHash.equals(this.origin.hash)) return undefined;
    const { throughId } = this.origin;
    if (throughId === undefined) {
      return `row ${id} is the first row but does not chain from the genesis: the rows before it were removed`;
    }
    const missing = missingRows(throughId, id);
    return `row ${id} does not chain from row ${throughId}, the last archived${missing ? `: ${missing} missing` : ''}`;
  }
}

/** "row 5 is" / "rows 5 to 9 are", between two ids; undefined when they are neighbours. */
function missingRows(before: bigint, after: bigint): string | undefined {
  if (after - before <= 1n) return undefined;
  return after - before === 2n
    ? `row ${before + 1n} is`
    : `rows ${before + 1n} to ${after - 1n} are`;
}
