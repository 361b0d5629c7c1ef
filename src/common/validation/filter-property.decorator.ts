import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, ValidateIf } from 'class-validator';
import { parseJsonNumber } from '../json/json-number.js';
import { INT64_SCHEMA } from '../openapi/int64.schema.js';
import { IsIntegerBetween } from './is-integer-between.decorator.js';
import { IsOneOf } from './enum-property.decorator.js';
import { IsInt64, isInt64 } from './is-int64.decorator.js';
import { IsText, TEXT_PATTERN, type TextLimits } from './is-text.decorator.js';
import type { IntegerLimits } from './integer-property.decorator.js';

/*
 * Equality filters of a list's query (`GET /care-schedules?kind=water&paused=false`): each
 * optional, documented as a query parameter with the schema of the field it filters on,
 * and refused (400, naming the parameter) when it is not a value that field can hold.
 * A query's values are text: each is read as its field's type first.
 */

interface FilterOptions {
  description: string;
}

const present = ValidateIf((_, value) => value !== undefined);

/** `true` or `false`, exactly. */
export function BooleanFilter(options: FilterOptions): PropertyDecorator {
  return applyDecorators(
    ApiProperty({ type: 'boolean', required: false, ...options }),
    Transform(({ value }) => (value === 'true' ? true : value === 'false' ? false : value)),
    present,
    IsBoolean(),
  );
}

/** An integer from `min` to `max`, in decimal digits. */
export function IntegerFilter(
  { min, max }: IntegerLimits,
  options: FilterOptions,
): PropertyDecorator {
  return applyDecorators(
    ApiProperty({
      type: 'integer',
      format: 'int32',
      minimum: min,
      maximum: max,
      required: false,
      ...options,
    }),
    Transform(({ value }) =>
      typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value,
    ),
    present,
    IsIntegerBetween(min, max),
  );
}

/** A signed 64-bit integer, read as a path's id is (ParseInt64Pipe), kept as a bigint. */
export function Int64Filter(options: FilterOptions): PropertyDecorator {
  return applyDecorators(
    ApiProperty({ ...INT64_SCHEMA, required: false, ...options }),
    Transform(({ value }) => {
      const number = typeof value === 'string' ? parseJsonNumber(value) : value;
      return isInt64(number) ? BigInt(number) : value;
    }),
    present,
    IsInt64(),
  );
}

/** Text a field of these limits can hold (see IsText). */
export function TextFilter(limits: TextLimits, options: FilterOptions): PropertyDecorator {
  return applyDecorators(
    ApiProperty({
      type: 'string',
      minLength: limits.min,
      maxLength: limits.max,
      pattern: TEXT_PATTERN,
      required: false,
      ...options,
    }),
    present,
    IsText(limits),
  );
}

/** One of `values`, exactly. */
export function EnumFilter<const Values extends readonly [string, ...string[]]>(
  values: Values,
  options: FilterOptions,
): PropertyDecorator {
  return applyDecorators(
    ApiProperty({ type: 'string', enum: [...values], required: false, ...options }),
    present,
    IsOneOf(values),
  );
}
