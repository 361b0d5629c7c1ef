import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { ValidateBy } from 'class-validator';
import { absentAllowed, type PropertyOptions } from './absent-allowed.js';

/**
 * A body property holding one of `values`, exactly (case and all): documented as
 * `{type: string, enum: values}`, and refused otherwise with a message naming the
 * property and the values (`grade must be one of: a, b, c`). Stored as text no longer
 * than the longest value. Not required: absent is allowed, `null` is not.
 */
export function EnumProperty<const Values extends readonly [string, ...string[]]>(
  values: Values,
  options: PropertyOptions<Values[number]>,
): PropertyDecorator {
  return applyDecorators(
    ApiProperty({ type: 'string', enum: [...values], ...options }),
    ...absentAllowed(options),
    IsOneOf(values),
  );
}

/** Exactly one of `values`; the message names the property and the values. */
export function IsOneOf(values: readonly string[]): PropertyDecorator {
  return ValidateBy({
    name: 'isOneOf',
    validator: {
      validate: (value: unknown) => (values as readonly unknown[]).includes(value),
      defaultMessage: (args) => `${args?.property} must be one of: ${values.join(', ')}`,
    },
  });
}
