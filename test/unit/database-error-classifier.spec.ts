import { describe, expect, it } from 'vitest';
import { QueryFailedError } from 'typeorm';
import { classifyDatabaseError } from '../../src/database/database-error.classifier.js';

/** An error as pg raises it, wrapped by TypeORM as a repository call would see it. */
const failed = (code: string) =>
  new QueryFailedError('INSERT …', [], Object.assign(new Error('failed'), { code }));

describe('classifyDatabaseError', () => {
  it('answers a unique violation 409, for any table', () => {
    expect(classifyDatabaseError(failed('23505'))).toEqual({
      status: 409,
      message: 'this conflicts with something that exists already',
    });
  });

  it('answers a character the database cannot store 400', () => {
    expect(classifyDatabaseError(failed('22P05'))).toMatchObject({ status: 400 });
  });

  it('answers an unreachable database 503 with Retry-After, and warns', () => {
    expect(classifyDatabaseError(failed('57P01'))).toMatchObject({
      status: 503,
      headers: { 'Retry-After': '5' },
      warning: expect.stringMatching(/unavailable/),
    });
  });

  it('leaves other errors to the filter', () => {
    expect(classifyDatabaseError(new Error('bug'))).toBeUndefined();
    expect(classifyDatabaseError(failed('42P01'))).toBeUndefined();
  });
});
