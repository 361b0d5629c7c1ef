import type { ValueTransformer } from 'typeorm';

/** `pg` returns int8 as a string to keep every digit; the domain uses `bigint`. */
export const bigintTransformer: ValueTransformer = {
  to: (value: bigint | null | undefined) => (value == null ? value : value.toString()),
  from: (value: string | null) => (value == null ? value : BigInt(value)),
};
