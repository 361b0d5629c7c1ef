import { registerDecorator, type ValidationOptions } from 'class-validator';

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;
export const INT64_RULE = `must be an integer from ${INT64_MIN} to ${INT64_MAX}`;

export function isInt64(value: unknown): value is number | bigint {
  if (typeof value === 'number') return Number.isSafeInteger(value);
  return typeof value === 'bigint' && value >= INT64_MIN && value <= INT64_MAX;
}

/** A JSON integer in the signed 64-bit range (as parsed by `parseJsonNumber`). */
export function IsInt64(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isInt64',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: `$property ${INT64_RULE}`,
        ...options,
      },
      validator: { validate: isInt64 },
    });
}
