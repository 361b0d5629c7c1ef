import { describe, expect, it } from 'vitest';
import {
  DATE_TIME_KEY,
  INT64_KEY,
  Keyset,
  TEXT_KEY,
  UUID_KEY,
} from '../../src/common/pagination/keyset.js';
import { PLANTS_BY_ID } from '../../src/plants/plants-keyset.js';

const base64url = (text: string) => Buffer.from(text).toString('base64url');

describe('the plants keyset (one int64 column)', () => {
  const plant = (id: bigint) => ({ id, name: 'x', tag: null });

  it.each([[0n], [1n], [-1n], [9223372036854775807n], [-9223372036854775808n]])(
    'encodes the last id %s opaquely, as its digits, and decodes it back',
    (id) => {
      const cursor = PLANTS_BY_ID.cursorOf(plant(id));
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(cursor).toBe(base64url(String(id)));
      expect(PLANTS_BY_ID.decode(cursor)).toEqual([id]);
    },
  );

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
    ['a pair', base64url('["7","8"]')],
  ])('refuses a cursor that is %s', (_, cursor) => {
    expect(PLANTS_BY_ID.decode(cursor)).toBeUndefined();
  });
});

describe('a keyset over a date-time and a UUID', () => {
  interface Row {
    dueAt: Date;
    id: string;
  }
  const keyset = new Keyset<Row>(
    { property: 'dueAt', codec: DATE_TIME_KEY },
    { property: 'id', codec: UUID_KEY },
  );
  const id = '5b0e2c1e-8f0a-4d55-9a43-0f7a3c2b9e61';

  it.each(['0001-01-01T00:00:00.000Z', '2026-07-01T12:30:00.123Z', '9999-12-31T23:59:59.999Z'])(
    'round-trips %s to the millisecond',
    (instant) => {
      const cursor = keyset.cursorOf({ dueAt: new Date(instant), id });
      expect(Buffer.from(cursor, 'base64url').toString()).toBe(JSON.stringify([instant, id]));
      expect(keyset.decode(cursor)).toEqual([new Date(instant), id]);
    },
  );

  it.each([
    ['without milliseconds', `["2026-07-01T12:30:00Z","${id}"]`],
    ['with an offset', `["2026-07-01T14:30:00.000+02:00","${id}"]`],
    ['an impossible date', `["2025-02-29T00:00:00.000Z","${id}"]`],
    ['one part', '["2026-07-01T12:30:00.000Z"]'],
    ['three parts', `["2026-07-01T12:30:00.000Z","${id}","${id}"]`],
    ['spaced', `["2026-07-01T12:30:00.000Z", "${id}"]`],
    ['an upper-case UUID', `["2026-07-01T12:30:00.000Z","${id.toUpperCase()}"]`],
    ['not JSON', `2026-07-01T12:30:00.000Z ${id}`],
    ['numbers', '[1, 2]'],
  ])('refuses a cursor %s', (_, text) => {
    expect(keyset.decode(base64url(text))).toBeUndefined();
    expect(() => keyset.startAfter(base64url(text))).toThrow(/cursor is not one this service/);
  });

  it('cuts a page of `limit` from limit + 1 rows, its cursor the last row kept', () => {
    const rows = [1, 2, 3].map((day) => ({ dueAt: new Date(Date.UTC(2026, 0, day)), id }));
    expect(keyset.pageOf(rows.slice(0, 2), 2)).toEqual({ items: rows.slice(0, 2) });
    const { items, nextCursor } = keyset.pageOf(rows, 2);
    expect(items).toEqual(rows.slice(0, 2));
    expect(keyset.decode(nextCursor!)).toEqual([rows[1].dueAt, id]);
  });
});

describe('key codecs', () => {
  it('keep text as it is, in a JSON array when the key has two columns', () => {
    const keyset = new Keyset<{ name: string; id: string }>(
      { property: 'name', codec: TEXT_KEY },
      { property: 'id', codec: UUID_KEY },
    );
    const row = { name: '🌱 "a",\\b', id: '00000000-0000-4000-8000-000000000000' };
    expect(keyset.decode(keyset.cursorOf(row))).toEqual([row.name, row.id]);
  });

  it('read only what they write', () => {
    expect(INT64_KEY.read(INT64_KEY.write(-5n))).toBe(-5n);
    expect(DATE_TIME_KEY.read('2026-07-01T12:30:00.1234Z')).toBeUndefined();
  });
});
