import { describe, expect, it } from 'vitest';
import { QueryFailedError } from 'typeorm';
import { classifyDatabaseError } from '../../src/database/database-error.classifier.js';

/** An error as pg raises it, wrapped by TypeORM as a repository call would see it. */
const failed = (code: string, detail?: string) =>
  new QueryFailedError('INSERT …', [], Object.assign(new Error('failed'), { code, detail }));

describe('classifyDatabaseError', () => {
  it('answers a unique violation 409, for any table', () => {
    expect(classifyDatabaseError(failed('23505'))).toEqual({
      status: 409,
      message: 'this conflicts with something that exists already',
    });
  });

  it('answers a character the database cannot store 400', () => {
    expect(classifyDatabaseError(failed('22P05'))).toMatchObject({ status: 400 });
    expect(classifyDatabaseError(failed('22021'))).toMatchObject({ status: 400 });
  });

  it.each([
    ['23502', 400, 'a required value is missing'],
    ['23514', 400, 'a value is outside what is allowed'],
    ['22001', 400, 'a value is too long'],
    ['22003', 400, 'a number is out of range'],
    ['22P02', 400, 'a value is not in a valid form'],
    ['22007', 400, 'a value cannot be stored'],
    ['23001', 409, 'this is still referred to by something else'],
    ['23P01', 409, 'this conflicts with something that exists already'],
  ])(
    'answers SQLSTATE %s, which a request can cause in any module, %i: %s',
    (code, status, message) => {
      expect(classifyDatabaseError(failed(code))).toEqual({ status, message });
    },
  );

  it('answers a foreign key violation 409, telling a missing parent from one still referred to', () => {
    expect(
      classifyDatabaseError(
        failed('23503', 'Key (plant_id)=(5) is not present in table "plants".'),
      ),
    ).toEqual({ status: 409, message: 'this refers to something that does not exist' });
    expect(
      classifyDatabaseError(
        failed('23503', 'Key (id)=(5) is still referenced from table "notes".'),
      ),
    ).toEqual({ status: 409, message: 'this is still referred to by something else' });
  });

  it('answers an unreachable database 503 with Retry-After, and warns', () => {
    expect(classifyDatabaseError(failed('57P01'))).toMatchObject({
      status: 503,
      headers: { 'Retry-After': '5' },
      warning: expect.stringMatching(/unavailable/),
    });
  });

  it.each([
    ['25006', 'a server that takes no writes'],
    ['40001', 'a serialization failure'],
    ['40P01', 'a deadlock'],
    ['55P03', 'a lock not had within lock_timeout'],
  ])("answers SQLSTATE %s, %s, 503 with Retry-After: the database's 'not now'", (code) => {
    expect(classifyDatabaseError(failed(code))).toMatchObject({
      status: 503,
      headers: { 'Retry-After': '5' },
    });
  });

  it('leaves other errors to the filter', () => {
    expect(classifyDatabaseError(new Error('bug'))).toBeUndefined();
    expect(classifyDatabaseError(failed('42P01'))).toBeUndefined();
  });
});
