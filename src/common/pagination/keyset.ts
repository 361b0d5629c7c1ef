import { BadRequestException } from '@nestjs/common';
import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { parseJsonNumber } from '../json/json-number.js';
import { isInt64 } from '../validation/is-int64.decorator.js';

/**
 * How one column's value is written into a cursor and read back from it: the extension
 * point for a new kind of key. `write` gives the value's one text; `read` gives the value
 * back from exactly that text and undefined for any other (`007` for 7, `1e0`, a date
 * without its milliseconds), so that a cursor the service did not issue is refused (400)
 * rather than read as something close. `read(write(value))` must equal `value` exactly: a
 * key that comes back different starts the next page at the wrong row.
 */
export interface KeyCodec<Value> {
  read(text: string): Value | undefined;
  write(value: Value): string;
}

/** A UUID as PostgreSQL writes one (lower case, hyphenated). */
export const UUID_KEY: KeyCodec<string> = {
  read: (text) =>
    /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(text) ? text : undefined,
  write: String,
};

/** A signed 64-bit integer, in its decimal digits. */
export const INT64_KEY: KeyCodec<bigint> = {
  read: (text) => {
    const value = parseJsonNumber(text);
    return isInt64(value) ? BigInt(value) : undefined;
  },
  write: String,
};

/** An integer within JavaScript's safe integers (an `int` column), in its decimal digits. */
export const INTEGER_KEY: KeyCodec<number> = {
  read: (text) => {
    const value = parseJsonNumber(text);
    return typeof value === 'number' && Number.isSafeInteger(value) ? value : undefined;
  },
  write: String,
};

/** Any text (a `varchar` or an enum column), as it is. */
export const TEXT_KEY: KeyCodec<string> = { read: (text) => text, write: String };

export const BOOLEAN_KEY: KeyCodec<boolean> = {
  read: (text) => (text === 'true' ? true : text === 'false' ? false : undefined),
  write: String,
};

/**
 * An instant, to the millisecond (`toISOString`), which is all a JavaScript Date holds.
 * The column it is compared with must hold no more: a `timestamptz(3)` column, or one
 * compared through `atMilliseconds`. A `timestamptz` written by SQL (`DEFAULT now()`,
 * `SET at = now()`) has microseconds: the cursor of a row at 12:00:00.123456 says
 * 12:00:00.123, the row is after its own cursor, and every next page repeats it.
 */
export const DATE_TIME_KEY: KeyCodec<Date> = {
  read: (text) => {
    if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(text)) return undefined;
    const instant = new Date(text);
    return !Number.isNaN(instant.getTime()) && instant.toISOString() === text ? instant : undefined;
  },
  write: (instant) => instant.toISOString(),
};

/** A `timestamptz` column compared at the millisecond its Date and its cursor hold. */
export const atMilliseconds = (column: string) => `date_trunc('milliseconds', ${column})`;

/** One column of an order: the entity's property and how its values go into a cursor. */
export interface KeyColumn<Row, Property extends keyof Row & string = keyof Row & string> {
  property: Property;
  codec: KeyCodec<Row[Property]>;
  /** The SQL the column is ordered and compared by, given the column (`atMilliseconds`); itself by default. */
  sql?: (column: string) => string;
}

/** The values of a row's key columns, in the order's order. */
export type Key = readonly unknown[];

export interface Page<Item> {
  items: Item[];
  /** Where the next page starts; undefined on the last page. */
  nextCursor?: string;
}

/**
 * A list read a page at a time in one order (keyset pagination): by each column
 * ascending, the last one unique (the id), so that every row has its place. A page
 * starts after the key of the last row of the previous one, read from an opaque cursor
 * (base64url of the key's text), so paging while rows come and go never repeats a row
 * and never skips one that was there throughout. The repository orders its query with
 * `page`; the service reads the cursor with `startAfter` and cuts the page with `pageOf`.
 *
 * A new kind of key column is a KeyCodec (its `write` and a strict `read`); a column
 * whose stored values are finer than its codec's (a `timestamptz` written by SQL's
 * `now()`, microseconds, read into a millisecond Date) is compared through `sql`
 * (`atMilliseconds`) or stored no finer (`timestamptz(3)`): otherwise pages repeat rows.
 */
export class Keyset<Row extends ObjectLiteral> {
  private readonly columns: readonly KeyColumn<Row>[];

  constructor(...columns: KeyColumn<Row>[]) {
    this.columns = columns;
  }

  /** A row's key, as a cursor: one column's text as it is, several as a JSON array of texts. */
  cursorOf(row: Row): string {
    const texts = this.columns.map(({ property, codec }) => codec.write(row[property]));
    return Buffer.from(texts.length === 1 ? texts[0] : JSON.stringify(texts)).toString('base64url');
  }

  /** The key a cursor stands for; undefined unless it is exactly what cursorOf issues. */
  decode(cursor: string): Key | undefined {
    const text = Buffer.from(cursor, 'base64url').toString('utf8');
    const texts = this.columns.length === 1 ? [text] : textsOf(text);
    if (texts?.length !== this.columns.length) return undefined;
    const key = this.columns.map(({ codec }, index) => codec.read(texts[index]));
    if (key.includes(undefined)) return undefined;
    const row = Object.fromEntries(this.columns.map(({ property }, i) => [property, key[i]]));
    return this.cursorOf(row as Row) === cursor ? key : undefined;
  }

  /**
   * The key to start after: undefined for no cursor (the first page); a 400 for a cursor
   * this service did not issue for this list.
   */
  startAfter(cursor: string | undefined): Key | undefined {
    if (cursor === undefined) return undefined;
    const key = this.decode(cursor);
    if (key === undefined) {
      throw new BadRequestException(
        'cursor is not one this service issued: copy it from the Link header of the previous page',
      );
    }
    return key;
  }

  /**
   * `query` (on the rows' entity, under its alias) ordered by the key, from the row after
   * `after` on, `count` rows at most (all of them without `count`).
   */
  page<Query extends SelectQueryBuilder<Row>>(
    query: Query,
    after: Key | undefined,
    count?: number,
  ): Query {
    const expressions = this.columns.map(({ property, sql = (column) => column }) =>
      sql(`${query.alias}.${property}`),
    );
    query.orderBy(expressions[0], 'ASC');
    for (const expression of expressions.slice(1)) query.addOrderBy(expression, 'ASC');
    if (after !== undefined) {
      const names = after.map((_, index) => `keysetAfter${index}`);
      query.andWhere(
        `(${expressions.join(', ')}) > (${names.map((name) => `:${name}`).join(', ')})`,
        Object.fromEntries(names.map((name, index) => [name, parameter(after[index])])),
      );
    }
    return query.limit(count);
  }

  /**
   * A page of `limit` rows from `rows`, read by `page` with one row more than the page
   * holds, which tells whether there is a next page.
   */
  pageOf(rows: Row[], limit: number): Page<Row> {
    if (rows.length <= limit) return { items: rows };
    const items = rows.slice(0, limit);
    return { items, nextCursor: this.cursorOf(items[items.length - 1]) };
  }
}

/** A JSON array of strings, or undefined. */
function textsOf(text: string): string[] | undefined {
  try {
    const texts: unknown = JSON.parse(text);
    return Array.isArray(texts) && texts.every((part) => typeof part === 'string')
      ? texts
      : undefined;
  } catch {
    return undefined;
  }
}

/** A key's value as a query parameter: a bigint as its digits (pg takes no bigint). */
const parameter = (value: unknown) => (typeof value === 'bigint' ? value.toString() : value);
