import { describe, expect, it } from 'vitest';
import { parseJsonNumber } from '../../src/common/json/json-number.js';

describe('parseJsonNumber', () => {
  it.each([
    ['0', 0],
    ['-0', 0],
    ['42', 42],
    ['-17', -17],
    ['1.0', 1],
    ['1e3', 1000],
    ['1E+3', 1000],
    ['2500e-2', 25],
    ['9007199254740991', 9007199254740991],
  ])('reads the integer %s as the number %s', (literal, expected) => {
    expect(parseJsonNumber(literal)).toBe(expected);
  });

  it.each([
    ['9007199254740993', 9007199254740993n],
    ['9223372036854775807', 9223372036854775807n],
    ['-9223372036854775808', -9223372036854775808n],
    ['9223372036854775808', 9223372036854775808n],
    ['9.223372036854775807e18', 9223372036854775807n],
  ])('reads the integer %s as a bigint, keeping every digit', (literal, expected) => {
    expect(parseJsonNumber(literal)).toBe(expected);
  });

  it.each([
    ['1.5', 1.5],
    ['-0.25', -0.25],
    ['3.14e-2', 0.0314],
  ])('reads the fraction %s as a number', (literal, expected) => {
    expect(parseJsonNumber(literal)).toBe(expected);
  });

  it.each([['1.0000000000000000001'], ['1e-400'], ['1e400'], ['12345678901234567890123']])(
    'reads %s, which rounding would turn into an integer, as NaN',
    (literal) => {
      expect(parseJsonNumber(literal)).toBeNaN();
    },
  );

  it('does not build huge integers from huge exponents', () => {
    expect(parseJsonNumber('1e999999999')).toBeNaN();
  });
});
