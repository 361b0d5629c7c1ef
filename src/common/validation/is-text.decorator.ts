import { registerDecorator, type ValidationArguments } from 'class-validator';

export interface TextLimits {
  /** Fewest Unicode code points. */
  min: number;
  /** Most Unicode code points. */
  max: number;
}

/**
 * The one character rule of text that a JSON Schema `pattern` can state for every client:
 * no U+0000 (written `\x00`, which ECMA-262, RE2, Java and Python read alike). Lone
 * surrogates, refused too, are no text: I-JSON (RFC 7493) already excludes them.
 */
export const TEXT_PATTERN = '^[^\\x00]*$';

/** Why `value` is not acceptable text within `limits`, or undefined when it is. */
export function textProblem(value: unknown, { min, max }: TextLimits): string | undefined {
  if (typeof value !== 'string') return 'must be a string';
  if (!value.isWellFormed()) return 'must be valid Unicode (it contains a lone surrogate)';
  if (value.includes('\u0000')) return 'must not contain the character U+0000';
  let length = 0;
  for (const _ of value) length++;
  if (length < min || length > max) return `must be ${min} to ${max} characters long`;
  return undefined;
}

/**
 * A string PostgreSQL stores exactly as sent: well-formed Unicode without U+0000, its
 * length counted in code points (as `varchar(n)` counts them).
 */
export function IsText(limits: TextLimits): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isText',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: ({ property, value }: ValidationArguments) =>
          `${property} ${textProblem(value, limits)}`,
      },
      validator: { validate: (value: unknown) => textProblem(value, limits) === undefined },
    });
}
