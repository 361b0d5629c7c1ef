import { BODY_LIMIT_BYTES } from '../../src/common/http/http-app.js';
import { MAX_JSON_DEPTH } from '../../src/common/json/json-codec.js';

/** The largest `make(n)` whose body still fits the body limit; no plant (its name is empty). */
function atBodyLimit(make: (n: number) => string): string {
  const body = (n: number) => `{"name":"",${make(n)}}`;
  let [fits, tooBig] = [0, BODY_LIMIT_BYTES];
  while (tooBig - fits > 1) {
    const middle = Math.floor((fits + tooBig) / 2);
    if (Buffer.byteLength(body(middle)) <= BODY_LIMIT_BYTES) fits = middle;
    else tooBig = middle;
  }
  return body(fits);
}

export const zeros = (n: number) => '0'.repeat(n);
export const members = (count: number, member: (index: number) => string) =>
  Array.from({ length: count }, (_, index) => member(index)).join(',');
const wideObject = (keys: number) => `{${members(keys, (index) => `"k${index}":[1,2]`)}}`;

/**
 * The costliest bodies we could think of for each part of the JSON codec, each as large as
 * the body limit allows. None is valid for any operation (an empty name, or no object).
 */
export const HOSTILE_BODIES: Array<[string, string]> = [
  ['an integer 1, zeros, 1', atBodyLimit((n) => `"n":1${zeros(n)}1`)],
  ['a fraction 1., zeros, 1', atBodyLimit((n) => `"n":1.${zeros(n)}1`)],
  ['an exponent 1e1, zeros, 1', atBodyLimit((n) => `"n":1e1${zeros(n)}1`)],
  ['an exponent 1e-, zeros, 1', atBodyLimit((n) => `"n":1e-${zeros(n)}1`)],
  ['as the id, 1, zeros, 1', atBodyLimit((n) => `"id":1${zeros(n)}1`)],
  ['as the id, 1.0, zeros, 1e5', atBodyLimit((n) => `"id":1.0${zeros(n)}1e5`)],
  ['many numbers 1, zeros, 1', atBodyLimit((n) => `"n":[${members(n, () => `1${zeros(60)}1`)}]`)],
  ['the exponents 1e999999999 and 1e-999999999', '{"id":1e999999999,"name":"","n":1e-999999999}'],
  ['a string of \\u0000 escapes', atBodyLimit((n) => `"s":"${'\\u0000'.repeat(n)}"`)],
  ['a string of \\\\ escapes', atBodyLimit((n) => `"s":"${'\\\\'.repeat(n)}"`)],
  [
    'a string of escaped surrogate pairs',
    atBodyLimit((n) => `"s":"${'\\ud83c\\udf35'.repeat(n)}"`),
  ],
  ['an object of thousands of keys', atBodyLimit((n) => `"w":{${members(n, (i) => `"k${i}":0`)}}`)],
  [
    'an object of thousands of index keys, descending',
    atBodyLimit((n) => `"w":{${members(n, (i) => `"${n - i}":0`)}}`),
  ],
  [
    'a key repeated thousands of times with one value',
    atBodyLimit((n) => `"d":{${members(n, () => '"a":0')}}`),
  ],
  ['a key repeated with another value', atBodyLimit((n) => `"d":{"a":${wideObject(n)},"a":0}`)],
  [
    'a key repeated with one big value',
    atBodyLimit((n) => `"d":{${members(n, () => `"a":${wideObject(500)}`)}}`),
  ],
  [
    'the whole plant repeated with one big value',
    atBodyLimit((n) => members(n, () => `"big":${wideObject(300)}`)),
  ],
  [
    'arrays nested as deep as allowed',
    atBodyLimit(
      (n) =>
        `"deep":${'['.repeat(MAX_JSON_DEPTH - 1)}${members(n, () => '0')}${']'.repeat(MAX_JSON_DEPTH - 1)}`,
    ),
  ],
  [
    'arrays nested deeper than allowed',
    `${'['.repeat(BODY_LIMIT_BYTES / 2)}${']'.repeat(BODY_LIMIT_BYTES / 2)}`,
  ],
];
