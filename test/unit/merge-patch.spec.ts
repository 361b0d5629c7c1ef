import { describe, expect, it } from 'vitest';
import { mergePatch } from '../../src/common/validation/merge-patch.js';

describe('mergePatch (RFC 7396)', () => {
  // The examples of RFC 7396, appendix A, whose target and patch are objects.
  it.each([
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ])('merges %j with %j into %j', (target, patch, merged) => {
    expect(mergePatch(target, patch)).toEqual(merged);
  });

  it('replaces a Date or a bigint whole, and leaves the target as it was', () => {
    const target = { at: new Date('2026-07-01T00:00:00.000Z'), id: 1n };
    const at = new Date('2027-01-01T00:00:00.000Z');
    expect(mergePatch(target, { at, id: 2n })).toEqual({ at, id: 2n });
    expect(target.at.toISOString()).toBe('2026-07-01T00:00:00.000Z');
  });
});
