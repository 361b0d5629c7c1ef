import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { IsText, TEXT_PATTERN, type TextLimits } from './is-text.decorator.js';
import { absentAllowed, type PropertyOptions } from './absent-allowed.js';

/**
 * A body property holding text (see IsText: well-formed Unicode without U+0000, from
 * `min` to `max` code points), stored in a `varchar(max)` column: documented as
 * `{type: string, minLength, maxLength, pattern}` (the pattern: no U+0000). Not required:
 * absent is allowed, `null` is not.
 */
export function TextProperty(
  limits: TextLimits,
  options: PropertyOptions<string>,
): PropertyDecorator {
  return applyDecorators(
    ApiProperty({
      type: 'string',
      minLength: limits.min,
      maxLength: limits.max,
      pattern: TEXT_PATTERN,
      ...options,
    }),
    ...absentAllowed(options),
    IsText(limits),
  );
}
