import { ValidateBy } from 'class-validator';

/** For `@Transform`: a string of decimal digits (a query or environment value) becomes a number. */
export const decimalDigitsToNumber = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;

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
