import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { IsBoolean } from 'class-validator';
import { absentAllowed, type PropertyOptions } from './absent-allowed.js';

/**
 * A body property holding JSON `true` or `false`, stored in a `boolean` column:
 * documented as `{type: boolean}`; `"true"`, `1` and `null` are refused (`done must be a
 * boolean value`). Not required: absent is allowed, `null` is not.
 */
export function BooleanProperty(options: PropertyOptions<boolean>): PropertyDecorator {
  return applyDecorators(
    ApiProperty({ type: 'boolean', ...options }),
    ...absentAllowed(options),
    IsBoolean(),
  );
}
