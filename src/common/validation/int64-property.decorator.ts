import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { INT64_SCHEMA } from '../openapi/int64.schema.js';
import { absentAllowed, type PropertyOptions } from './absent-allowed.js';
import { IsInt64 } from './is-int64.decorator.js';

/**
 * A body property holding an int64: validated, turned into a `bigint`, documented as int64.
 * Not required: absent is allowed, `null` is not.
 */
export function Int64Property(options: PropertyOptions<bigint>): PropertyDecorator {
  return applyDecorators(
    // The document's default is a JSON number: one within 2^53 (a bigint is no JSON).
    ApiProperty({
      ...INT64_SCHEMA,
      ...options,
      ...(options.default !== undefined && { default: Number(options.default) }),
    }),
    ...absentAllowed(options),
    IsInt64(),
    Transform(({ value }) => (Number.isSafeInteger(value) ? BigInt(value) : value)),
  );
}
