import { ValidateBy } from 'class-validator';

/** For `@Transform`: a string of decimal digits (a query or environment value) becomes a number. */
export const decimalDigitsToNumber = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;

/**
 * A JSON integer from `min` to `max`, both taken (`1e3` and `1.0` are integers, as JSON
 * Schema says; `1.5`, `"5"` and `null` are not), within JavaScript's safe integers. Its
 * message names the property and the limits: `limit must be an integer from 1 to 100`.
 * In a body, IntegerProperty also documents the limits.
 */
export function IsIntegerBetween(min: number, max: number): PropertyDecorator {
  return ValidateBy({
    name: 'isIntegerBetween',
    validator: {
      validate: (value: unknown) =>
        Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max,
      defaultMessage: (args) => `${args?.property} must be an integer from ${min} to ${max}`,
    },
  });
}
