import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringifyJson } from '../../src/common/json/json-codec.js';
import { dateTimeValues, invalidDateTimes, valueSpace } from '../support/openapi-arbitraries.js';
import type { OpenApiDocument } from '../support/openapi-contract.js';

const HARVEST = {
  type: 'object',
  properties: {
    weightGrams: { type: 'integer', format: 'int32', minimum: 1, maximum: 100_000 },
    harvestedAt: { type: 'string', format: 'date-time' },
    lot: { type: 'string', format: 'uuid' },
    grade: { type: 'string', enum: ['A', 'B'] },
    note: { type: ['string', 'null'], minLength: 1, maxLength: 10 },
    organic: { type: 'boolean' },
  },
  required: ['weightGrams', 'harvestedAt'],
};
const document = { openapi: '3.1.0', paths: {} } as OpenApiDocument;

/** The document's own reading of JSON Schema formats, as the contract checks answers. */
const ajv = new Ajv2020({ strict: false });
addFormats.default(ajv);
const conforms = ajv.compile(HARVEST);
const isDateTime = ajv.compile({ type: 'string', format: 'date-time' });
/** RFC 3339 wants hh:mm in an offset; Ajv also takes +hhmm and +hh, which the fuzzer calls invalid. */
const AJV_LAX_OFFSET = /T[\d:.]+[+-]\d{2,4}$/;
/** As the value is sent: JSON, read back as a JSON Schema validator reads it. */
const sent = (value: unknown) => JSON.parse(stringifyJson(value)) as unknown;

describe('values generated from a schema', () => {
  const space = valueSpace(document, HARVEST);

  it('are accepted by the schema when valid or at an edge', () => {
    fc.assert(
      fc.property(space.valid, ({ value }) => {
        expect(conforms(sent(value)), ajv.errorsText(conforms.errors)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('are refused by the schema when invalid', () => {
    fc.assert(
      fc.property(space.invalid!, ({ value, note }) => {
        if (AJV_LAX_OFFSET.test(String((value as { harvestedAt?: unknown })?.harvestedAt))) return;
        expect(conforms(sent(value)), `${note}: ${stringifyJson(value)}`).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it('reach the bounds of integers and lengths, and their far side', () => {
    const valid = fc.sample(space.valid, { numRuns: 1_000, seed: 1 }).map(({ value }) => value);
    const weights = valid.map((value) => (value as { weightGrams: number }).weightGrams);
    expect(weights).toEqual(expect.arrayContaining([1, 100_000]));
    const invalid = fc
      .sample(space.invalid!, { numRuns: 3_000, seed: 1 })
      .map(({ value }) => value);
    const brokenWeights = invalid.map((value) => (value as { weightGrams?: unknown })?.weightGrams);
    expect(brokenWeights).toEqual(expect.arrayContaining([0, 100_001]));
  });
});

describe('date-times', () => {
  it('are RFC 3339 date-times with an offset, valid or at an edge, far years and ±23:59 included', () => {
    const samples = fc.sample(dateTimeValues, { numRuns: 3_000, seed: 1 });
    for (const { value } of samples) expect(isDateTime(value), String(value)).toBe(true);
    const texts = samples.map(({ value }) => value as string);
    expect(texts.some((text) => text.endsWith('+23:59'))).toBe(true);
    expect(texts.some((text) => text.endsWith('-23:59'))).toBe(true);
    expect(texts.some((text) => /\.\d{7,9}[Z+-]/.test(text))).toBe(true);
    expect(texts).toContain('9999-12-31T23:59:59.999-23:59');
  });

  it('keep, when valid, an instant within the years 0001 to 9998 whatever the offset', () => {
    for (const { value, verdict } of fc.sample(dateTimeValues, { numRuns: 3_000, seed: 2 })) {
      if (verdict !== 'valid') continue;
      const year = new Date(value as string).getUTCFullYear();
      expect(year, String(value)).toBeGreaterThanOrEqual(1);
      expect(year, String(value)).toBeLessThanOrEqual(9998);
    }
  });

  it('are refused by the format when invalid (dates, weeks, no offset, days a month lacks)', () => {
    for (const { value } of fc.sample(invalidDateTimes, { numRuns: 500, seed: 1 })) {
      if (AJV_LAX_OFFSET.test(String(value))) continue;
      expect(isDateTime(value), String(value)).toBe(false);
    }
  });
});
