import { UnauthorizedException } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { withoutStackTrace } from '../../src/common/errors/without-stack-trace.js';

describe('withoutStackTrace', () => {
  it('builds the error with its message and no stack frames', () => {
    const error = withoutStackTrace(() => new UnauthorizedException('no token'));
    expect(error).toBeInstanceOf(UnauthorizedException);
    expect(error.message).toBe('no token');
    expect(error.stack).not.toMatch(/\n\s+at /);
  });

  it('leaves the stack trace limit as it was, also when building fails', () => {
    const limit = Error.stackTraceLimit;
    expect(() =>
      withoutStackTrace(() => {
        throw new Error('failed to build');
      }),
    ).toThrow('failed to build');
    expect(Error.stackTraceLimit).toBe(limit);
    expect(new Error('later').stack).toMatch(/\n\s+at /);
  });
});
