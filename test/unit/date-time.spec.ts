import { describe, expect, it } from 'vitest';
import { dateTimeProblem, parseDateTime } from '../../src/common/validation/date-time.decorator.js';

describe('RFC 3339 date-times (IsDateTime)', () => {
  it.each([
    ['2026-07-01T12:30:00Z', '2026-07-01T12:30:00.000Z'],
    ['2026-07-01T14:30:00.5+02:00', '2026-07-01T12:30:00.500Z'],
    ['2026-07-01t12:30:00.123456789z', '2026-07-01T12:30:00.123Z'],
    ['2026-07-01T12:30:00-00:00', '2026-07-01T12:30:00.000Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
    ['2000-02-29T23:59:59.999-23:59', '2000-03-01T23:58:59.999Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
    ['0000-12-31T23:00:00-01:00', '0001-01-01T00:00:00.000Z'],
    ['0099-06-15T00:00:00Z', '0099-06-15T00:00:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
    ['9999-12-31T23:59:59.999+23:59', '9999-12-31T00:00:59.999Z'],
  ])('takes %s as %s, which JSON writes back as RFC 3339', (text, utc) => {
    expect(dateTimeProblem(text)).toBeUndefined();
    expect(parseDateTime(text)!.toISOString()).toBe(utc);
  });

  const FORM =
    'must be an RFC 3339 date-time with an offset, as 2026-07-01T12:30:00Z or 2026-07-01T14:30:00.5+02:00';
  const REAL =
    'must name a real date and time: month 01-12, a day of that month, hour 00-23, minute and second 00-59 (no leap second), offset at most 23:59';
  const RANGE = 'must fall in the years 0001 to 9999 once converted to UTC';

  it.each([
    ['9999-12-31T23:59:59.999-23:59', RANGE],
    ['0001-01-01T00:00:00+00:01', RANGE],
    ['0000-01-01T00:00:00Z', RANGE],
    ['2026-07-01', FORM],
    ['2026', FORM],
    ['2026-07-01T12:30:00', FORM],
    ['2026-07-01T12:30', FORM],
    ['2026-W27-3', FORM],
    ['2026-182', FORM],
    ['20260701', FORM],
    ['20260701T123000Z', FORM],
    ['2026-07-01T12:30:00+02', FORM],
    ['2026-07-01T12:30:00+0200', FORM],
    ['2026-07-01 12:30:00Z', FORM],
    ['2026-07-01T12:30:00.Z', FORM],
    ['+002026-07-01T12:30:00Z', FORM],
    ['-000001-01-01T00:00:00Z', FORM],
    ['２026-07-01T12:30:00Z', FORM],
    [' 2026-07-01T12:30:00Z', FORM],
    ['2026-07-01T12:30:00Z\n', FORM],
    ['2025-02-29T00:00:00Z', REAL],
    ['1900-02-29T00:00:00Z', REAL],
    ['2026-13-01T00:00:00Z', REAL],
    ['2026-00-01T00:00:00Z', REAL],
    ['2026-04-31T00:00:00Z', REAL],
    ['2026-07-00T00:00:00Z', REAL],
    ['2026-07-01T24:00:00Z', REAL],
    ['2026-07-01T12:60:00Z', REAL],
    ['2016-12-31T23:59:60Z', REAL],
    ['2026-07-01T12:30:00+24:00', REAL],
    ['2026-07-01T12:30:00+01:60', REAL],
    [1_782_000_000_000, 'must be a string'],
    [null, 'must be a string'],
  ])('refuses %j: %s', (value, problem) => {
    expect(dateTimeProblem(value)).toBe(problem);
    expect(parseDateTime(value)).toBeUndefined();
  });
});
