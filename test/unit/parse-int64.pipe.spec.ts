import { BadRequestException } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { ParseInt64Pipe } from '../../src/common/validation/parse-int64.pipe.js';

describe('ParseInt64Pipe', () => {
  const pipe = new ParseInt64Pipe();
  const parse = (value: string) => pipe.transform(value, { type: 'param', data: 'id' });

  it.each([
    ['0', 0n],
    ['-0', 0n],
    ['42', 42n],
    ['9007199254740993', 9007199254740993n],
    ['9223372036854775807', 9223372036854775807n],
    ['-9223372036854775808', -9223372036854775808n],
    ['1e3', 1000n],
    ['1.0', 1n],
    ['922337203685477580.7e1', 9223372036854775807n],
  ])('reads %s as %s', (value, expected) => {
    expect(parse(value)).toBe(expected);
  });

  it.each([
    ['9223372036854775808'],
    ['-9223372036854775809'],
    ['1.5'],
    ['1e-1'],
    ['1e400'],
    ['abc'],
    [''],
    ['01'],
    ['+1'],
    ['.5'],
    ['1.'],
    ['0x10'],
    [' 1'],
    ['1 '],
    ['Infinity'],
    ['NaN'],
  ])('refuses %j with 400, naming the parameter', (value) => {
    expect(() => parse(value)).toThrow(BadRequestException);
    expect(() => parse(value)).toThrow(
      /^id must be an integer from -9223372036854775808 to 9223372036854775807$/,
    );
  });
});
