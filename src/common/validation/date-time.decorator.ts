import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { registerDecorator, type ValidationArguments } from 'class-validator';
import { absentAllowed, type PropertyOptions } from './absent-allowed.js';

/**
 * RFC 3339's `date-time` (section 5.6): a full date, `T`, a full time and an offset, `Z` or
 * `±hh:mm` (`t` and `z` may be lower case, as its note allows).
 */
const RFC_3339_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

/** The instants a date-time may name: years 0001 to 9999 in UTC. */
export const DATE_TIME_RANGE = {
  min: new Date('0001-01-01T00:00:00.000Z'),
  max: new Date('9999-12-31T23:59:59.999Z'),
};

const EXAMPLES = '2026-07-01T12:30:00Z or 2026-07-01T14:30:00.5+02:00';

function daysIn(year: number, month: number): number {
  const lastDay = new Date(0);
  lastDay.setUTCFullYear(year, month, 0);
  return lastDay.getUTCDate();
}

/**
 * The instant `value` names and, when it names none this service takes, why not. See
 * IsDateTime for what is taken.
 */
function readDateTime(value: unknown): { instant: Date } | { problem: string } {
  if (typeof value !== 'string') return { problem: 'must be a string' };
  const match = RFC_3339_DATE_TIME.exec(value);
  if (!match) {
    return { problem: `must be an RFC 3339 date-time with an offset, as ${EXAMPLES}` };
  }
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number);
  const [, , , , , , , fraction, sign, offsetHour, offsetMinute] = match;
  const offsetMinutes = sign ? Number(offsetHour) * 60 + Number(offsetMinute) : 0;
  if (
    month < 1 ||
    month > 12 ||
    day < 1 ||
    day > daysIn(year, month) ||
    hour > 23 ||
    minute > 59 ||
    second > 59 ||
    Number(offsetHour ?? 0) > 23 ||
    Number(offsetMinute ?? 0) > 59
  ) {
    return {
      problem:
        'must name a real date and time: month 01-12, a day of that month, hour 00-23, minute and second 00-59 (no leap second), offset at most 23:59',
    };
  }
  const instant = new Date(0);
  // setUTCFullYear, not Date.UTC, which reads the years 0 to 99 as 1900 to 1999.
  instant.setUTCFullYear(year, month - 1, day);
  instant.setUTCHours(hour, minute, second, Number((fraction ?? '').slice(0, 3).padEnd(3, '0')));
  instant.setTime(instant.getTime() - (sign === '-' ? -1 : 1) * offsetMinutes * 60_000);
  if (instant < DATE_TIME_RANGE.min || instant > DATE_TIME_RANGE.max) {
    return { problem: 'must fall in the years 0001 to 9999 once converted to UTC' };
  }
  return { instant };
}

/** Why `value` is not a date-time IsDateTime accepts, or undefined when it is. */
export function dateTimeProblem(value: unknown): string | undefined {
  const read = readDateTime(value);
  return 'problem' in read ? read.problem : undefined;
}

/** The instant of a date-time IsDateTime accepts, or undefined for any other value. */
export function parseDateTime(value: unknown): Date | undefined {
  const read = readDateTime(value);
  return 'instant' in read ? read.instant : undefined;
}

/**
 * A timestamp as RFC 3339 writes it, which the service stores in a `timestamptz` column
 * and answers as `Date.toISOString()` does (`2026-07-01T10:30:00.500Z`). It accepts:
 * - exactly RFC 3339's `date-time`: `YYYY-MM-DDThh:mm:ss`, an optional fraction of a
 *   second (any number of digits; the instant is kept to the millisecond, further digits
 *   are dropped), then `Z` or an offset `±hh:mm` (`-00:00` is UTC); `t` and `z` may be
 *   lower case;
 * - a real date and time: month 01-12, a day its month has (29 February in leap years),
 *   hour 00-23, minute and second 00-59 (a leap second, `:60`, is refused: a JavaScript
 *   Date has none), an offset of at most 23:59;
 * - an instant from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z once converted to
 *   UTC: what both PostgreSQL's `timestamptz` holds and a four-digit RFC 3339 year writes
 *   back (`9999-12-31T23:59:59.999-23:59` is in the year 10000 in UTC, and refused).
 *
 * It refuses everything else, ISO 8601's other forms included: a date alone (`2026-07-01`),
 * a year (`2026`), a time without an offset (`2026-07-01T12:30:00`, which would be read as
 * some server's local time), week and ordinal dates (`2026-W27-3`, `2026-182`), the basic
 * format (`20260701T123000Z`), an offset in hours alone (`+02`), a space for `T`.
 */
export function IsDateTime(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isDateTime',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: ({ property, value }: ValidationArguments) =>
          `${property} ${dateTimeProblem(value)}`,
      },
      validator: { validate: (value: unknown) => value instanceof Date },
    });
}

/**
 * A body property holding a date-time (see IsDateTime): validated, turned into a `Date`,
 * documented as `{type: string, format: date-time}`. Not required: absent is allowed,
 * `null` is not.
 */
export function DateTimeProperty(options: PropertyOptions<Date>): PropertyDecorator {
  return applyDecorators(
    ApiProperty({ type: 'string', format: 'date-time', ...options }),
    ...absentAllowed(options),
    // Before validation: a value that is no date-time stays as sent, for the message.
    Transform(({ value }) => parseDateTime(value) ?? value),
    IsDateTime(),
  );
}
