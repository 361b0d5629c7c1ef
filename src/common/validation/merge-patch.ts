import type { Type } from '@nestjs/common';
import { RequestValidationPipe } from './validation.pipe.js';

/** A JSON object: not an array, nor a value a DTO made of one (a Date, a bigint). */
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' &&
  value !== null &&
  [Object.prototype, null].includes(Object.getPrototypeOf(value));

/**
 * `target` with the JSON Merge Patch `patch` applied (RFC 7396, section 2): each member of
 * the patch replaces the target's, `null` removes it, an object is merged into the
 * target's member the same way; the members the patch leaves out stay as they are.
 */
export function mergePatch<Target extends object>(target: Target, patch: object): Target {
  const merged: Record<string, unknown> = { ...(target as Record<string, unknown>) };
  for (const [name, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (value === null) delete merged[name];
    else if (isObject(value))
      merged[name] = mergePatch(isObject(merged[name]) ? merged[name] : {}, value);
    else merged[name] = value;
  }
  return merged as Target;
}

/**
 * `body` validated as the request body `dto` describes, by the pipe every request goes
 * through: the DTO, or a 400 naming each problem. For what a merge patch makes, which
 * must be as valid as a body that wrote it whole.
 */
export async function validatedAs<Dto>(dto: Type<Dto>, body: object): Promise<Dto> {
  return (await new RequestValidationPipe().transform(body, {
    type: 'body',
    metatype: dto,
  })) as Dto;
}
