import { describe, expect, it } from 'vitest';
import { decodePlantCursor, encodePlantCursor } from '../../src/plants/plant-cursor.js';

describe('plant cursors', () => {
  it.each([[0n], [1n], [-1n], [9223372036854775807n], [-9223372036854775808n]])(
    'encode the last id %s opaquely and decode it back',
    (id) => {
      const cursor = encodePlantCursor(id);
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(decodePlantCursor(cursor)).toBe(id);
    },
  );

  const base64url = (text: string) => Buffer.from(text).toString('base64url');

  it.each([
    ['empty', ''],
    ['not base64url', '!!!'],
    ['padded', `${base64url('7')}==`],
    ['base64 rather than base64url', Buffer.from('>>>').toString('base64')],
    ['not a number', base64url('seven')],
    ['not an integer', base64url('1.5')],
    ['past int64', base64url('9223372036854775808')],
    ['another spelling of an id', base64url('7e0')],
    ['with leading zeros', base64url('007')],
  ])('refuse a cursor that is %s', (_, cursor) => {
    expect(decodePlantCursor(cursor)).toBeUndefined();
  });
});
