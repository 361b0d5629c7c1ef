import fc from 'fast-check';
import { parse } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { JsonBodyError, parseJsonBody, stringifyJson } from '../../src/common/json/json-codec.js';
import { parseJsonNumber } from '../../src/common/json/json-number.js';

/** What lossless-json alone makes of a body: the reading the codec's faster path must keep. */
function losslessReading(text: string): { value: unknown } | { refused: string } {
  try {
    return { value: parse(text, null, parseJsonNumber) };
  } catch (error) {
    return { refused: `the request body is not valid JSON: ${(error as Error).message}` };
  }
}

function codecReading(text: string): { value: unknown } | { refused: string } {
  try {
    return { value: parseJsonBody(Buffer.from(text)) };
  } catch (error) {
    if (!(error instanceof JsonBodyError)) throw error;
    return { refused: error.message };
  }
}

/** Number literals of every kind the fast path must hand over: long, fractional, -0, exponents. */
const numberLiteral = fc.oneof(
  fc.integer().map(String),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
  fc.constantFrom('-0', '0', '1.0', '1e3', '1E3', '-1e-3', '12345678901234567', '123456789012345'),
);

/** JSON texts with those numbers, duplicate keys (equal values or not) and odd spacing. */
const jsonText: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    numberLiteral,
    fc.constantFrom('true', 'false', 'null', '"e"', '"1.5"', '"a:b"', '"\\"e:1\\""'),
    fc.array(tie('value'), { maxLength: 4 }).map((items) => `[ ${items.join(' , ')} ]`),
    fc
      .array(fc.tuple(fc.constantFrom('a', 'b', 'id', '__proto__', 'e1'), tie('value')), {
        maxLength: 4,
      })
      .map((members) => `{${members.map(([key, value]) => `"${key}" :${value}`).join(',')}}`),
  ),
})).value;

/** Those texts, and the same with one character left out: mostly invalid JSON. */
const bodyText = fc
  .oneof(
    jsonText,
    fc.tuple(jsonText, fc.nat()).map(([text, at]) => {
      const cut = at % (text.length + 1);
      return text.slice(0, cut) + text.slice(cut + 1);
    }),
  )
  // An empty body has a refusal of its own.
  .filter((text) => text.length > 0);

describe('parseJsonBody', () => {
  it('reads every body exactly as lossless-json does, refusals and their messages included', () => {
    fc.assert(
      fc.property(bodyText, (text) => {
        expect(codecReading(text)).toEqual(losslessReading(text));
      }),
      { numRuns: 2_000 },
    );
  });

  it('refuses a key given twice with different values, and keeps one given twice alike', () => {
    expect(codecReading('{"id":1,"name":"a","id":2}')).toEqual({
      refused: expect.stringContaining("Duplicate key 'id'"),
    });
    expect(codecReading('{"id":1,"name":"a","id":1}')).toEqual({ value: { id: 1, name: 'a' } });
  });

  it('keeps every digit of an int64 and reads -0 as 0', () => {
    expect(codecReading('{"id":9223372036854775807,"n":-0}')).toEqual({
      value: { id: 9223372036854775807n, n: 0 },
    });
  });
});

describe('stringifyJson', () => {
  it('writes what JSON.stringify writes of a value without bigints: dates, undefined members and all', () => {
    const value = fc.oneof(
      fc.jsonValue(),
      fc.dictionary(
        fc.oneof(fc.string(), fc.constant('__proto__')),
        fc.oneof(fc.date({ noInvalidDate: true }), fc.constant(undefined), fc.jsonValue()),
      ),
    );
    fc.assert(
      fc.property(value, (each) => {
        expect(stringifyJson(each)).toBe(JSON.stringify(each) ?? 'null');
      }),
    );
  });

  it('writes a bigint as a bare JSON number, every digit kept', () => {
    expect(stringifyJson({ id: -9223372036854775808n, items: [1n, 2, null] })).toBe(
      '{"id":-9223372036854775808,"items":[1,2,null]}',
    );
  });
});
