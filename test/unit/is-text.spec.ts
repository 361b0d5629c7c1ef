import { describe, expect, it } from 'vitest';
import { textProblem } from '../../src/common/validation/is-text.decorator.js';

describe('textProblem', () => {
  const limits = { min: 1, max: 3 };

  it.each([['a'], ['abc'], ['🌵🌵🌵'], ['e\u0301x']])('accepts %j', (value) => {
    expect(textProblem(value, limits)).toBeUndefined();
  });

  it('counts code points, not UTF-16 units', () => {
    expect(textProblem('🌵'.repeat(3), limits)).toBeUndefined();
    expect(textProblem('🌵'.repeat(4), limits)).toBe('must be 1 to 3 characters long');
  });

  it.each([
    ['', 'must be 1 to 3 characters long'],
    [5, 'must be a string'],
    [null, 'must be a string'],
    ['a\u0000', 'must not contain the character U+0000'],
    ['\ud83c', 'must be valid Unicode (it contains a lone surrogate)'],
  ])('refuses %j: %s', (value, problem) => {
    expect(textProblem(value, limits)).toBe(problem);
  });
});
