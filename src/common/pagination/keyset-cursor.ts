import { BadRequestException } from '@nestjs/common';

/**
 * Where the next page of a list starts: the last key of the page, opaque to clients
 * (base64url of the key's text).
 */
export function encodeCursor(lastKey: string): string {
  return Buffer.from(lastKey).toString('base64url');
}

/**
 * The key a cursor stands for; undefined unless `cursor` is exactly what encodeCursor
 * issues for a key `read` takes (so `007` for 7, padding or a stray character are refused).
 * @param read the key a cursor's text names, undefined when it names none
 * @param write the key's text, as encodeCursor was given it
 */
export function decodeCursor<Key>(
  cursor: string,
  read: (text: string) => Key | undefined,
  write: (key: Key) => string = String,
): Key | undefined {
  const key = read(Buffer.from(cursor, 'base64url').toString('utf8'));
  return key !== undefined && encodeCursor(write(key)) === cursor ? key : undefined;
}

/**
 * The key to start after: undefined for no cursor (the first page); a 400 for a cursor
 * this service did not issue (see decodeCursor).
 */
export function startAfter<Key>(
  cursor: string | undefined,
  read: (text: string) => Key | undefined,
  write?: (key: Key) => string,
): Key | undefined {
  if (cursor === undefined) return undefined;
  const key = decodeCursor(cursor, read, write);
  if (key === undefined) {
    throw new BadRequestException(
      'cursor is not one this service issued: copy it from the Link header of the previous page',
    );
  }
  return key;
}

export interface Page<Item> {
  items: Item[];
  /** Where the next page starts; undefined on the last page. */
  nextCursor?: string;
}

/**
 * A page of `limit` items from `rows`, read by ascending key with one row more than the
 * page holds, which tells whether there is a next page.
 */
export function pageOf<Item>(
  rows: Item[],
  limit: number,
  keyOf: (item: Item) => string,
): Page<Item> {
  if (rows.length <= limit) return { items: rows };
  const items = rows.slice(0, limit);
  return { items, nextCursor: encodeCursor(keyOf(items[items.length - 1])) };
}

/** A UUID as PostgreSQL writes one (lower case, hyphenated): the key of a list by UUID. */
export function readUuid(text: string): string | undefined {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(text)
    ? text
    : undefined;
}
