import fc from 'fast-check';
import { MAX_JSON_DEPTH } from '../../src/common/json/json-codec.js';
import { INT64_MAX, INT64_MIN } from '../../src/common/validation/is-int64.decorator.js';
import { TEXT_UNIT } from './openapi-arbitraries.js';

export interface PlantContent {
  name: string;
  tag?: string;
}

/**
 * A request body and what it means under the contract: the plant it denotes however
 * oddly it is written, or the status that must refuse it.
 */
export interface HostileBody {
  payload: string | Buffer;
  means: { id: bigint; content: PlantContent } | { refused: 400 | 413 };
}

/** Text that has tripped up parsers, databases and terminals. */
const ODD_TEXT = [
  'e\u0301',
  '\u{1F469}\u200D\u{1F33E}',
  '\u{1F3F3}\uFE0F\u200D\u{1F308}',
  '\uFEFFbom',
  '\u2028\u2029',
  '\uFFFF\uFFFE',
  '\u{10FFFF}',
  '\u202Eevil',
  'İıß',
  '\\"\'`;--',
  '%s%n',
  '${x}',
];
const text = (minLength: number, maxLength: number) =>
  fc.oneof(
    fc.string({ unit: TEXT_UNIT, minLength, maxLength }),
    fc.constantFrom(...ODD_TEXT.filter((odd) => [...odd].length >= minLength)),
  );

const plantArbitrary = (ids: fc.Arbitrary<bigint>) =>
  fc.record(
    { id: ids, name: text(1, 20), tag: fc.oneof(fc.constant(''), text(0, 20)) },
    { requiredKeys: ['id', 'name'] },
  );

/** Every UTF-16 unit escaped, astral characters as escaped surrogate pairs. */
const escapeAll = (value: string) =>
  `"${[...Array(value.length).keys()]
    .map((index) => `\\u${value.charCodeAt(index).toString(16).padStart(4, '0')}`)
    .join('')}"`;

/** Ways to write a string that all mean the same string. */
const stringLiteral = (value: string) =>
  fc.constantFrom(
    JSON.stringify(value),
    escapeAll(value),
    JSON.stringify(value).replaceAll('/', '\\/'),
  );

/** Ways to write an integer that JSON Schema and the contract read as that integer. */
const integerLiteral = (value: bigint) =>
  fc.constantFrom(
    `${value}`,
    `${value}.0`,
    `${value}e0`,
    `${value}.000E+0`,
    ...(value === 0n ? ['-0', '0.0e5'] : []),
  );

const zeros = (count: number) => '0'.repeat(count);
const wideObject = (keys: number) =>
  `{${Array.from({ length: keys }, (_, index) => `"k${index}":${index}`).join(',')}}`;

const nestedArrays = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const nestedObjects = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

/** Members the contract ignores, some meant to pollute prototypes or exhaust parsers. */
const ignoredMember = fc.oneof(
  fc.constantFrom(
    '"__proto__":{"polluted":true}',
    '"constructor":{"prototype":{"polluted":true}}',
    '"prototype":{"polluted":true}',
    '"toString":1',
    '"hasOwnProperty":null',
    '"valueOf":[]',
    '"huge":1e999999',
    '"tiny":-1e-999999',
  ),
  fc.nat({ max: 2_000 }).map((digits) => `"long":1${'0'.repeat(digits)}`),
  // Digit runs with zeros inside cost quadratic time to a backtracking regular expression.
  fc.nat({ max: 15_000 }).map((count) => `"innerZeros":1${zeros(count)}1`),
  fc.nat({ max: 15_000 }).map((count) => `"fraction":1.${zeros(count)}1`),
  fc.nat({ max: 15_000 }).map((count) => `"exponent":1e-${zeros(count)}1`),
  fc.constantFrom('"hugeExponent":1e999999999', '"tinyExponent":-1e-999999999'),
  fc.nat({ max: 2_500 }).map((count) => `"escapes":"${'\\u0000'.repeat(count)}"`),
  fc.nat({ max: 5_000 }).map((count) => `"backslashes":"${'\\\\'.repeat(count)}"`),
  fc.nat({ max: 1_000 }).map((keys) => `"wide":${wideObject(keys)}`),
  // Duplicate keys with the very same value are allowed, however many and however big.
  fc.nat({ max: 2_000 }).map((count) => `"duplicates":{${'"a":0,'.repeat(count)}"a":0}`),
  fc
    .integer({ min: 1, max: 300 })
    .map((keys) => `"bigDuplicates":{"a":${wideObject(keys)},"a":${wideObject(keys)}}`),
  // The plant itself is the first level.
  fc.integer({ min: 1, max: MAX_JSON_DEPTH - 1 }).map((depth) => `"deep":${nestedArrays(depth)}`),
  fc
    .integer({ min: 1, max: MAX_JSON_DEPTH - 1 })
    .map((depth) => `"nested":${nestedObjects(depth)}`),
);
const whitespace = fc.constantFrom('', ' ', '\n\t ', '\r\n');

/** A plant written in one of many equivalent ways: it must be taken as that plant. */
const validBody = (ids: fc.Arbitrary<bigint>): fc.Arbitrary<HostileBody> =>
  plantArbitrary(ids).chain((plant) => {
    const member = (key: string, literal: fc.Arbitrary<string>) =>
      fc.tuple(whitespace, literal).map(([space, value]) => `${space}"${key}"${space}:${value}`);
    const id = member('id', integerLiteral(plant.id));
    const name = member('name', stringLiteral(plant.name));
    const tag = plant.tag === undefined ? [] : [member('tag', stringLiteral(plant.tag))];
    return fc
      .tuple(
        fc.tuple(id, name, ...tag),
        fc.uniqueArray(ignoredMember, {
          maxLength: 3,
          selector: (member) => member.slice(0, member.indexOf(':')),
        }),
        // A member repeated with the very same value means the same.
        fc.boolean(),
        fc.boolean(),
      )
      .chain(([members, ignored, repeatName, byteOrderMark]) => {
        const all = [...members, ...ignored, ...(repeatName ? [members[1]] : [])];
        return fc
          .shuffledSubarray(all, { minLength: all.length, maxLength: all.length })
          .map((ordered) => ({
            payload: `${byteOrderMark ? '\uFEFF' : ''}{${ordered.join(',')}}`,
            means: { id: plant.id, content: { name: plant.name, tag: plant.tag } },
          }));
      });
  });

const BAD_IDS = [
  `${INT64_MAX + 1n}`,
  `${INT64_MIN - 1n}`,
  '1e400',
  `1${'0'.repeat(30_000)}`,
  `1${zeros(30_000)}1`,
  `1.${zeros(30_000)}1`,
  `0.${zeros(30_000)}1`,
  '1e999999999',
  '1e-999999999',
  '1.5',
  '1e-400',
  '"1"',
  'true',
  'null',
  '[1]',
  '{}',
  '0x10',
  '01',
  '+1',
  '.5',
  'NaN',
  'Infinity',
  '1_000',
];
const BAD_NAMES = [
  '""',
  JSON.stringify('a'.repeat(256)),
  JSON.stringify('🌵'.repeat(256)),
  '"a\\u0000b"',
  '"\\ud800"',
  '"x\\udc00"',
  '"\\udc00\\ud800"',
  '1',
  'null',
  '["a"]',
  '"raw\tcontrol"',
];
const BAD_TAGS = ['null', JSON.stringify('t'.repeat(256)), '"\\udfff"', '0', '{}'];
/** Bytes that are not UTF-8: stray, truncated, overlong, a surrogate, beyond U+10FFFF. */
const BAD_UTF8 = [
  [0xff],
  [0xc3, 0x28],
  [0xe2, 0x82],
  [0xc0, 0xaf],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
];

/** A plant body with one thing wrong with it: it must be refused, and nothing stored. */
const invalidBody = (ids: fc.Arbitrary<bigint>): fc.Arbitrary<HostileBody> =>
  plantArbitrary(ids).chain((plant) => {
    const tag = plant.tag === undefined ? '' : `,"tag":${JSON.stringify(plant.tag)}`;
    const write = (id: string, name: string, rest = tag) => `{"id":${id},"name":${name}${rest}}`;
    const id = `${plant.id}`;
    const name = JSON.stringify(plant.name);
    const valid = write(id, name);
    const refused = (payload: string | Buffer, status: 400 | 413 = 400): HostileBody => ({
      payload,
      means: { refused: status },
    });
    return fc.oneof(
      fc.constantFrom(...BAD_IDS).map((bad) => refused(write(bad, name))),
      fc.constantFrom(...BAD_NAMES).map((bad) => refused(write(id, bad))),
      fc.constantFrom(...BAD_TAGS).map((bad) => refused(write(id, name, `,"tag":${bad}`))),
      fc.constant(refused(write(id, name, `${tag},"id":${plant.id === 0n ? 1 : 0}`))),
      fc
        .integer({ min: MAX_JSON_DEPTH, max: 5_000 })
        .chain((depth) => fc.constantFrom(nestedArrays(depth), nestedObjects(depth)))
        .map((deep) => refused(write(id, name, `${tag},"deep":${deep}`))),
      fc.constant(refused(write(id, name, `${tag},"name":""`))),
      fc
        .integer({ min: 1, max: 5_000 })
        .map((count) => refused(write(id, name, `${tag},${'"x":0,'.repeat(count)}"x":1`))),
      fc
        .constantFrom(...BAD_UTF8)
        .map((bytes) =>
          refused(
            Buffer.concat([
              Buffer.from(`{"id":${id},"name":"`),
              Buffer.from(bytes),
              Buffer.from(`${JSON.stringify(plant.name).slice(1)}${tag}}`),
            ]),
          ),
        ),
      fc.constantFrom(
        refused(`[${valid}]`),
        refused(`${valid}x`),
        refused(`${valid}${valid}`),
        refused(valid.slice(0, -1)),
        refused(`${valid.slice(0, -1)},}`),
        refused(`// a comment\n${valid}`),
        refused(valid.replace('"name"', "'name'")),
        refused(''),
        refused('null'),
        refused('"a plant"'),
        refused(nestedArrays(20_000)),
        refused(nestedObjects(10_000)),
        refused(write(id, JSON.stringify('a'.repeat(70_000))), 413),
        refused(`${' '.repeat(70_000)}${valid}`, 413),
      ),
    );
  });

/** Bodies for POST /plants or PUT /plants/{id}, valid ones written oddly and invalid ones. */
export function hostileBodies(ids: fc.Arbitrary<bigint>): fc.Arbitrary<HostileBody> {
  return fc.oneof(validBody(ids), invalidBody(ids));
}
