import { ValidateIf } from 'class-validator';

/**
 * What a property's validators need when it is not required (`required: false`): they
 * run only when it is present, so absent is allowed and `null` is still refused
 * (class-validator's IsOptional would let `null` through).
 */
export function absentAllowed({ required }: { required?: boolean }): PropertyDecorator[] {
  return required === false ? [ValidateIf((_, value) => value !== undefined)] : [];
}
