import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { IsIntegerBetween } from './is-integer-between.decorator.js';
import { absentAllowed, type PropertyOptions } from './absent-allowed.js';

/** What a PostgreSQL `integer` (int4) column holds. */
export const INT32_RANGE = { min: -(2 ** 31), max: 2 ** 31 - 1 };

export interface IntegerLimits {
  /** The least value taken, at least -2147483648. */
  min: number;
  /** The greatest value taken, at most 2147483647. */
  max: number;
}

/**
 * A body property holding a JSON integer from `min` to `max` (both taken), stored in an
 * `integer` column: documented as `{type: integer, format: int32, minimum, maximum}`, and
 * refused otherwise with a message naming the property and the limits (`weightGrams must
 * be an integer from 1 to 100000`). A number with a fraction (`1.5`), a string (`"5"`)
 * and `null` are refused; `1e3` and `1.0` are the integers JSON says they are. Bounds
 * outside int4 throw when the class is defined: the column could not hold such a value.
 * Not required: absent is allowed, `null` is not.
 */
export function IntegerProperty(
  { min, max }: IntegerLimits,
  options: PropertyOptions<number>,
): PropertyDecorator {
  if (!Number.isInteger(min) || !Number.isInteger(max) || min > max) {
    throw new Error(`integer limits ${min}..${max}: two integers, the least first`);
  }
  if (min < INT32_RANGE.min || max > INT32_RANGE.max) {
    throw new Error(`integer limits ${min}..${max} exceed an integer column's; use Int64Property`);
  }
  return applyDecorators(
    ApiProperty({ type: 'integer', format: 'int32', minimum: min, maximum: max, ...options }),
    ...absentAllowed(options),
    IsIntegerBetween(min, max),
  );
}
