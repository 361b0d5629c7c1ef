import { describe, expect, it } from 'vitest';
import { isInt64 } from '../../src/common/validation/is-int64.decorator.js';

describe('isInt64', () => {
  it.each([0, -1, Number.MAX_SAFE_INTEGER, 2n ** 63n - 1n, -(2n ** 63n)])('accepts %s', (value) => {
    expect(isInt64(value)).toBe(true);
  });

  it.each([
    2n ** 63n,
    -(2n ** 63n) - 1n,
    1.5,
    Number.NaN,
    Infinity,
    '1',
    true,
    null,
    undefined,
    {},
  ])('refuses %s', (value) => {
    expect(isInt64(value)).toBe(false);
  });
});
