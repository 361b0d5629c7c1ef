import { isLosslessNumber, parse, stringify, toSafeNumberOrThrow } from 'lossless-json';
import { INT64_PROPERTIES } from './generated/int64-properties.js';

/**
 * Parses an answer without rounding: `JSON.parse` reads 9223372036854775807 as …808.
 * An int64 property becomes a `bigint`; any other number a `number`, or an error if it
 * would lose digits.
 */
export function parseJson(text: string): unknown {
  return parse(text, (key, value) => {
    if (!isLosslessNumber(value)) return value;
    return INT64_PROPERTIES.has(key) ? BigInt(value.value) : toSafeNumberOrThrow(value.value);
  });
}

/** Serialises a request body; a `bigint` is written as a bare JSON number. */
export function stringifyJson(value: unknown): string | undefined {
  return stringify(value);
}
