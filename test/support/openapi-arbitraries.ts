import fc from 'fast-check';
import { INT64_MAX, INT64_MIN } from '../../src/common/validation/is-int64.decorator.js';
import { TEXT_PATTERN } from '../../src/common/validation/is-text.decorator.js';
import type { OpenApiDocument } from './openapi-contract.js';

export type Schema = Record<string, unknown>;

/**
 * What the document says of a generated value:
 * - `valid`: the document accepts it, so the service must too;
 * - `edge`: the document accepts it, but a limit it cannot express may refuse it (a
 *   date-time whose instant leaves the years 0001–9998 once its offset is applied, a
 *   leap second, a value the service issues such as a cursor): any 4xx, or a success
 *   whose stored value reads back in the document's shape;
 * - `invalid`: the document refuses it, so the service must answer 4xx.
 */
export type Verdict = 'valid' | 'edge' | 'invalid';

export interface Generated {
  value: unknown;
  verdict: Verdict;
  /** What makes it an edge or invalid, for the failure message. */
  note?: string;
}

/** A schema's valid values (edges among them), and values that break it when there are any. */
export interface ValueSpace {
  valid: fc.Arbitrary<Generated>;
  invalid?: fc.Arbitrary<Generated>;
}

export interface SchemaOptions {
  /**
   * Valid values of string formats whose rules the document states only in words (a
   * webhook URL must be on a public address): without one, a format's valid values come
   * from the schema's `examples`.
   */
  formats?: Record<string, fc.Arbitrary<string>>;
}

const VERDICT_ORDER: Verdict[] = ['valid', 'edge', 'invalid'];

/** The verdict of a value made of parts: its worst part's. */
export function worst(verdicts: Verdict[]): Verdict {
  return VERDICT_ORDER[Math.max(0, ...verdicts.map((verdict) => VERDICT_ORDER.indexOf(verdict)))];
}

const valid = (value: unknown): Generated => ({ value, verdict: 'valid' });
const edge =
  (note: string) =>
  (value: unknown): Generated => ({ value, verdict: 'edge', note });
const invalid =
  (note: string) =>
  (value: unknown): Generated => ({
    value,
    verdict: 'invalid',
    note,
  });

/**
 * Text as the contract takes it: any Unicode scalar value but U+0000 (the one character
 * the contract refuses, which text's `pattern` states), counted in code points.
 */
export const TEXT_UNIT = fc
  .string({ unit: 'binary', minLength: 1, maxLength: 1 })
  .filter((character) => character !== '\u0000');

/** Follows `#/components/schemas/…` and one-member `allOf` (how a described `$ref` is written). */
export function resolveSchema(document: OpenApiDocument, schema: Schema): Schema {
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.replace('#/components/schemas/', '');
    return resolveSchema(document, document.components!.schemas![name]);
  }
  const allOf = schema.allOf as Schema[] | undefined;
  if (allOf?.length === 1) {
    const { allOf: _, ...rest } = schema;
    return { ...resolveSchema(document, allOf[0]), ...rest };
  }
  return schema;
}

/** Values a schema of the served OpenAPI document accepts (its edges included). */
export function arbitraryFromSchema(
  document: OpenApiDocument,
  schema: Schema,
  options: SchemaOptions = {},
): fc.Arbitrary<unknown> {
  return valueSpace(document, schema, options).valid.map(({ value }) => value);
}

/**
 * The values of a schema: objects (unknown properties now and then, which the schemas
 * allow), strings with their lengths, formats (date-time, uuid, uri) and enums, integers
 * within their format and `minimum`/`maximum` (int64 as `bigint` beyond 2^53, written as
 * exact JSON digits), booleans, arrays, `null` where the type allows it, and references to
 * `#/components/schemas/…`; each with the values just outside its bounds as invalid ones.
 * Anything else is refused loudly, so that a document growing beyond this never goes
 * untested unnoticed.
 */
export function valueSpace(
  document: OpenApiDocument,
  schema: Schema,
  options: SchemaOptions = {},
): ValueSpace {
  const resolved = resolveSchema(document, schema);
  if (Array.isArray(resolved.enum)) return enumSpace(resolved.enum);
  const types = [resolved.type].flat();
  if (types.length > 1) {
    const spaces = types.map((type) => valueSpace(document, { ...resolved, type }, options));
    const invalids = spaces.flatMap(({ invalid }) => (invalid ? [invalid] : []));
    return {
      valid: fc.oneof(...spaces.map((space) => space.valid)),
      // A string's wrong type, null, is right for a nullable string.
      invalid:
        invalids.length === 0
          ? undefined
          : fc
              .oneof(...invalids)
              .filter(({ value }) => !(value === null && types.includes('null'))),
    };
  }
  switch (types[0]) {
    case 'object':
      return objectSpace(document, resolved, options);
    case 'array':
      return arraySpace(document, resolved, options);
    case 'string':
      return stringSpace(resolved, options);
    case 'integer':
      return integerSpace(resolved);
    case 'boolean':
      return {
        valid: fc.boolean().map(valid),
        invalid: fc.constantFrom('true', 1, null).map(invalid('not a boolean')),
      };
    case 'null':
      return { valid: fc.constant(valid(null)) };
    default:
      throw new Error(`no generator for the schema ${JSON.stringify(schema)}`);
  }
}

function enumSpace(members: unknown[]): ValueSpace {
  const texts = members.filter((member): member is string => typeof member === 'string');
  const outside = [...texts.map((text) => `${text}-not-a-member`), ...texts.map(swapCase), 42];
  return {
    valid: fc.constantFrom(...members).map(valid),
    invalid: fc
      .constantFrom(...outside.filter((value) => !members.includes(value)))
      .map(invalid('not a member of the enum')),
  };
}

const swapCase = (text: string) =>
  [...text].map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join('');

/** Each property valid; or one property invalid, a required one missing, or no object at all. */
export function objectSpace(
  document: OpenApiDocument,
  schema: Schema,
  options: SchemaOptions,
  /** Spaces that replace those of the schema's properties of the same names. */
  overrides: Record<string, ValueSpace> = {},
): ValueSpace {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = (schema.required as string[] | undefined) ?? [];
  const spaces = Object.fromEntries(
    Object.entries(properties).map(([name, property]) => [
      name,
      overrides[name] ?? valueSpace(document, property, options),
    ]),
  );
  const validMembers = fc.record(
    Object.fromEntries(Object.entries(spaces).map(([name, space]) => [name, space.valid])),
    { requiredKeys: required },
  );
  const extra =
    schema.additionalProperties === false
      ? fc.constant({})
      : fc.dictionary(
          fc.string({ maxLength: 10 }).filter((key) => !(key in properties)),
          fc.jsonValue({ maxDepth: 2 }),
          { maxKeys: 2 },
        );
  const assemble = (members: Record<string, Generated>, unknown: object): Generated => {
    const parts = Object.values(members);
    const notes = parts.flatMap(({ note }, index) =>
      note ? [`${Object.keys(members)[index]}: ${note}`] : [],
    );
    return {
      value: {
        ...unknown,
        ...Object.fromEntries(Object.entries(members).map(([name, { value }]) => [name, value])),
      },
      verdict: worst(parts.map(({ verdict }) => verdict)),
      ...(notes.length > 0 && { note: notes.join('; ') }),
    };
  };
  const breakOne = Object.entries(spaces).flatMap(([name, space]) =>
    space.invalid
      ? [
          fc
            .tuple(validMembers, space.invalid)
            .map(([members, broken]) => assemble({ ...members, [name]: broken }, {})),
        ]
      : [],
  );
  const dropOne = required.map((name) =>
    validMembers.map((members) => {
      const { [name]: _, ...rest } = members;
      return { ...assemble(rest, {}), verdict: 'invalid' as const, note: `${name} is missing` };
    }),
  );
  const notAnObject = fc
    .constantFrom<unknown>([], 'text', 1, null, true)
    .map(invalid('not an object'));
  return {
    valid: fc.tuple(validMembers, extra).map(([members, unknown]) => assemble(members, unknown)),
    invalid: fc.oneof(...breakOne, ...dropOne, notAnObject),
  };
}

function arraySpace(document: OpenApiDocument, schema: Schema, options: SchemaOptions): ValueSpace {
  const items = valueSpace(document, (schema.items ?? {}) as Schema, options);
  const minLength = (schema.minItems as number | undefined) ?? 0;
  const maxLength = Math.min((schema.maxItems as number | undefined) ?? 5, minLength + 5);
  return {
    valid: fc.array(items.valid, { minLength, maxLength }).map((elements) => ({
      value: elements.map(({ value }) => value),
      verdict: worst(elements.map(({ verdict }) => verdict)),
    })),
    invalid: fc.constant('not an array').map(invalid('not an array')),
  };
}

function stringSpace(schema: Schema, { formats = {} }: SchemaOptions): ValueSpace {
  const minLength = (schema.minLength as number | undefined) ?? 0;
  const maxLength = schema.maxLength as number | undefined;
  const wrongType = fc.constantFrom<unknown>(1, true, null).map(invalid('not a string'));
  const outsideLengths = [
    ...(minLength > 0 ? [fc.constant('x'.repeat(minLength - 1))] : []),
    // Astral characters: the length is counted in code points, not UTF-16 units.
    ...(maxLength !== undefined ? [fc.constant('🌱'.repeat(maxLength + 1))] : []),
  ].map((text) => text.map(invalid(`not ${minLength} to ${maxLength ?? '∞'} characters`)));
  const format = schema.format as string | undefined;
  const examples = (schema.examples as string[] | undefined) ?? [];
  const given = format
    ? (formats[format] ?? (examples.length > 0 ? fc.constantFrom(...examples) : undefined))
    : undefined;
  if (format === 'date-time') {
    return { valid: dateTimeValues, invalid: fc.oneof(invalidDateTimes, wrongType) };
  }
  if (format === 'uuid') {
    const malformed = fc
      .constantFrom('not-a-uuid', '0000000-0000-0000-0000-000000000000', '{}')
      .map(invalid('not a uuid'));
    return { valid: fc.uuid().map(valid), invalid: fc.oneof(malformed, wrongType) };
  }
  if (format !== undefined) {
    if (!given) throw new Error(`no values for the format ${format}: give some in formats`);
    const malformed = fc.constantFrom('not a ' + format, '').map(invalid(`not a ${format}`));
    return { valid: given.map(valid), invalid: fc.oneof(malformed, ...outsideLengths, wrongType) };
  }
  // Text's pattern (no U+0000) is the text rule below, whose values keep their edges.
  const isText = schema.pattern === TEXT_PATTERN;
  if (typeof schema.pattern === 'string' && !isText) {
    return {
      valid: fc
        .stringMatching(new RegExp(schema.pattern))
        .filter((text) => lengthOf(text) >= minLength && lengthOf(text) <= (maxLength ?? Infinity))
        .map(valid),
      invalid: wrongType,
    };
  }
  const text = (min: number, max: number) =>
    fc.string({ unit: TEXT_UNIT, minLength: min, maxLength: max });
  const longest = maxLength ?? minLength + 300;
  const values = fc.oneof(
    { weight: 4, arbitrary: text(minLength, Math.min(longest, minLength + 40)) },
    // The bounds themselves, in astral characters (4 bytes each in UTF-8).
    { weight: 1, arbitrary: text(minLength, minLength) },
    { weight: 1, arbitrary: fc.constant('🌵'.repeat(longest)) },
  );
  // Text no rule bounds is something the service issued (a cursor): any text may be refused.
  const opaque = maxLength === undefined;
  const withU0000 = fc
    .constant('\u0000'.padEnd(Math.max(minLength, 1), 'x'))
    .map(invalid('U+0000 in text'));
  return {
    valid: values.map(opaque ? edge('text the service did not issue') : valid),
    invalid: fc.oneof(...outsideLengths, wrongType, ...(isText ? [withU0000] : [])),
  };
}

const lengthOf = (text: string) => [...text].length;

function integerSpace(schema: Schema): ValueSpace {
  const [formatMin, formatMax] =
    schema.format === 'int32' ? [-(2n ** 31n), 2n ** 31n - 1n] : [INT64_MIN, INT64_MAX];
  const min = bound(schema.minimum, schema.exclusiveMinimum, 1n) ?? formatMin;
  const max = bound(schema.maximum, schema.exclusiveMaximum, -1n) ?? formatMax;
  const edges = [min, max, min + 1n, max - 1n, 0n, -1n, 1n, 2n ** 53n + 1n, 2n ** 31n].filter(
    (value) => value >= min && value <= max,
  );
  const outside = [
    min - 1n,
    max + 1n,
    ...(min === formatMin ? [] : [formatMin]),
    ...(max === formatMax ? [] : [formatMax]),
  ];
  return {
    valid: fc
      .oneof(fc.constantFrom(...edges), fc.bigInt(min, max))
      .map((value) => valid(asJsonInteger(value))),
    invalid: fc.oneof(
      fc
        .constantFrom(...outside)
        .map((value) => invalid(`outside ${min}..${max}`)(asJsonInteger(value))),
      fc.constantFrom<unknown>(1.5, '12', true, null).map(invalid('not an integer')),
    ),
  };
}

function bound(inclusive: unknown, exclusive: unknown, step: bigint): bigint | undefined {
  if (typeof exclusive === 'number') return BigInt(exclusive) + step;
  return typeof inclusive === 'number' ? BigInt(inclusive) : undefined;
}

/** A `number` when it is exact as one, else a `bigint` (stringifyJson writes its digits). */
function asJsonInteger(value: bigint): number | bigint {
  return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(value)
    : value;
}

const pad = (value: number, width = 2) => String(value).padStart(width, '0');
const daysIn = (year: number, month: number) =>
  [
    31,
    year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28,
    31,
    30,
    31,
    30,
    31,
    31,
    30,
    31,
    30,
    31,
  ][month - 1];

/** RFC 3339 offsets: Z, or ±hh:mm up to ±23:59 (the extremes often). */
const offsets = fc.oneof(
  fc.constantFrom('Z', '+00:00', '-00:00', '+23:59', '-23:59', '+05:30', '-09:30'),
  fc
    .tuple(
      fc.constantFrom('+', '-'),
      fc.integer({ min: 0, max: 23 }),
      fc.integer({ min: 0, max: 59 }),
    )
    .map(([sign, hours, minutes]) => `${sign}${pad(hours)}:${pad(minutes)}`),
);

/** Fractions of a second of 1 to 9 digits (finer than PostgreSQL's microseconds), or none. */
const fractions = fc.oneof(
  fc.constant(''),
  fc.constantFrom('.0', '.999', '.999999', '.9999999', '.123456789'),
  fc.stringMatching(/^\.\d{1,9}$/),
);

/** A date-time in `years`, any calendar day, any time of day. */
function dateTimes(years: fc.Arbitrary<number>): fc.Arbitrary<string> {
  return fc
    .record({
      year: years,
      month: fc.integer({ min: 1, max: 12 }),
      day: fc.integer({ min: 1, max: 31 }),
      hour: fc.integer({ min: 0, max: 23 }),
      minute: fc.integer({ min: 0, max: 59 }),
      second: fc.integer({ min: 0, max: 59 }),
      fraction: fractions,
      offset: offsets,
    })
    .map(
      ({ year, month, day, hour, minute, second, fraction, offset }) =>
        `${pad(year, 4)}-${pad(month)}-${pad(Math.min(day, daysIn(year, month)))}` +
        `T${pad(hour)}:${pad(minute)}:${pad(second)}${fraction}${offset}`,
    );
}

/**
 * RFC 3339 date-times with an offset. Valid: years 0002–9997, whose instant stays within
 * 0001–9998 whatever the offset (both PostgreSQL and a JSON date-time hold it), the far
 * years and the offsets' and fractions' extremes included. Edges: the years 0000, 0001 and
 * 9999 with any offset (`9999-12-31T23:59:59.999-23:59` is in year 10000 in UTC), a leap
 * second, lower-case `t` and `z`: a service may refuse them, or must serve them back as
 * date-times.
 */
export const dateTimeValues: fc.Arbitrary<Generated> = fc.oneof(
  {
    weight: 6,
    arbitrary: dateTimes(
      fc.oneof(fc.integer({ min: 2, max: 9997 }), fc.constantFrom(2, 1970, 9997)),
    ).map(valid),
  },
  {
    weight: 2,
    arbitrary: fc
      .oneof(
        dateTimes(fc.constantFrom(0, 1, 9999)),
        fc.constantFrom(
          '9999-12-31T23:59:59.999-23:59',
          '9999-12-31T23:59:59.9999999Z',
          '0000-01-01T00:00:00+23:59',
          '0001-01-01T00:00:00+00:01',
          '2026-06-30T23:59:60Z',
          '2026-07-01t10:00:00z',
        ),
      )
      .map(edge('at the edge of the years a date-time holds, or a rare spelling')),
  },
);

/** Not RFC 3339 date-times: dates, weeks, no offset, no seconds, out-of-range fields. */
export const invalidDateTimes: fc.Arbitrary<Generated> = fc
  .constantFrom(
    '2026-07-01',
    '2026',
    '2026-07-01T10:00:00',
    '2026-07-01T10:00Z',
    '2026-W27-3',
    '20260701',
    '20260701T100000Z',
    '2026-07-01T10:00:00+0200',
    '2026-07-01T10:00:00+24:00',
    '2026-07-01T24:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-02-29T00:00:00Z',
    '2026-04-31T00:00:00Z',
    '+010000-01-01T00:00:00Z',
    '-000001-12-31T00:00:00Z',
    '2026-07-01T10:00:00.Z',
    'yesterday',
    '',
  )
  .map(invalid('not an RFC 3339 date-time with an offset'));

/** The schema of an operation's JSON request body, or of one of its parameters. */
export function operationSchema(
  document: OpenApiDocument,
  method: string,
  path: string,
  parameter?: string,
): Schema {
  const operation = document.paths[path][method] as unknown as {
    parameters: Array<{ name: string; schema: Schema }>;
    requestBody: { content: { 'application/json': { schema: Schema } } };
  };
  if (parameter === undefined) return operation.requestBody.content['application/json'].schema;
  return operation.parameters.find((candidate) => candidate.name === parameter)!.schema;
}
