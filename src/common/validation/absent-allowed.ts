import { ValidateIf } from 'class-validator';

/** What the shared property decorators take beside their limits. */
export interface PropertyOptions<Value> {
  description: string;
  /** false: the property may be absent. */
  required?: boolean;
  /**
   * true: `null` is taken too, and documented (a JSON Merge Patch's way to remove an
   * optional field); the property may be absent as well.
   */
  nullable?: boolean;
  /** What an absent property is, documented; the DTO's property initializer sets it. */
  default?: Value;
}

/**
 * What a property's validators need when it is not required (`required: false`): they
 * run only when it is present, so absent is allowed and `null` is still refused
 * (class-validator's IsOptional would let `null` through), unless `nullable`.
 */
export function absentAllowed({
  required,
  nullable,
}: Pick<PropertyOptions<unknown>, 'required' | 'nullable'>): PropertyDecorator[] {
  if (nullable) return [ValidateIf((_, value) => value !== undefined && value !== null)];
  return required === false ? [ValidateIf((_, value) => value !== undefined)] : [];
}
