import { describe, expect, it } from 'vitest';
import {
  canonicalForm,
  type ChainedAuditEvent,
  chainHash,
  GENESIS_HASH,
} from '../../src/audit/chain/audit-chain.js';
import { ChainVerifier, GENESIS } from '../../src/audit/chain/chain-verifier.js';

const row: ChainedAuditEvent = {
  id: '7',
  occurredAt: '2026-11-27T10:04:31.198042Z',
  event: 'token.created',
  subjectType: 'api_token',
  subjectId: 'abc',
  actor: 'cli:zoë',
  actorTokenId: null,
  details: '{"n": 1.50, "name": "x"}',
  previousHash: GENESIS_HASH,
  hash: null,
};

/** A chain of `count` rows from the genesis, ids from 1, each hashed as the trigger does. */
function chain(count: number): ChainedAuditEvent[] {
  const rows: ChainedAuditEvent[] = [];
  let previousHash: Buffer = GENESIS_HASH;
  for (let id = 1; id <= count; id++) {
    const next: ChainedAuditEvent = { ...row, id: String(id), previousHash, hash: null };
    next.hash = chainHash(previousHash, next);
    rows.push(next);
    previousHash = next.hash;
  }
  return rows;
}

const problems = (verifier: ChainVerifier, rows: ChainedAuditEvent[]) =>
  rows.map((each) => verifier.check(each)).filter(Boolean);

describe('the audit chain', () => {
  it('writes the canonical form as documented: each field a 4-byte big-endian length and its UTF-8 bytes, NULL as ff ff ff ff', () => {
    const field = (text: string) => {
      const bytes = Buffer.from(text, 'utf8');
      return Buffer.concat([Buffer.from([0, 0, 0, bytes.length]), bytes]);
    };
    expect(canonicalForm(row)).toEqual(
      Buffer.concat([
        field('7'),
        field('2026-11-27T10:04:31.198042Z'),
        field('token.created'),
        field('api_token'),
        field('abc'),
        field('cli:zoë'),
        Buffer.from('ffffffff', 'hex'),
        field('{"n": 1.50, "name": "x"}'),
      ]),
    );
  });

  it("hashes a row as PostgreSQL's audit_event_hash does (the value it gave for this row)", () => {
    expect(chainHash(GENESIS_HASH, row).toString('hex')).toBe(
      '1d89b20c1c96d2fb6d6d5d57d8525a568f22bcd65a2810628404e7beb835781d',
    );
  });

  it('takes a gap in ids where the link holds: ids rolled back before the chain began', () => {
    const rows = chain(3);
    const skipped = { ...rows[2], id: '9' };
    skipped.hash = chainHash(rows[1].hash!, skipped);
    const verifier = new ChainVerifier(GENESIS);
    expect(problems(verifier, [rows[0], rows[1], skipped])).toEqual([]);
    expect(verifier.last).toEqual({ hash: skipped.hash, throughId: 9n });
  });

  it('names rows that come again, in an id order that goes back', () => {
    const rows = chain(3);
    expect(problems(new ChainVerifier(GENESIS), [...rows, rows[1]])).toEqual([
      'row 2 comes after row 3: the ids go back',
    ]);
  });

  it('starts after the last archived row, and names the rows missing before the first', () => {
    const rows = chain(6);
    const origin = { hash: rows[2].hash!, throughId: 3n };
    expect(problems(new ChainVerifier(origin), rows.slice(3))).toEqual([]);
    expect(problems(new ChainVerifier(origin), rows.slice(5))).toEqual([
      'row 6 does not chain from row 3, the last archived: rows 4 to 5 are missing',
    ]);
  });
});
