import { parse, stringify } from 'lossless-json';
import { parseJsonNumber } from './json-number.js';

/** Invalid UTF-8 is refused rather than silently replaced with U+FFFD. */
const utf8 = new TextDecoder('utf-8', { fatal: true });

export class JsonBodyError extends Error {
  override name = 'JsonBodyError';
}

/**
 * Parses a request body without losing int64 precision (plain `JSON.parse` rounds
 * 9223372036854775807 before any validation could see it).
 */
export function parseJsonBody(body: Buffer): unknown {
  if (body.length === 0) throw new JsonBodyError('the request body is empty; send a JSON object');
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw new JsonBodyError('the request body is not valid UTF-8');
  }
  try {
    return parse(text, null, parseJsonNumber);
  } catch (error) {
    throw new JsonBodyError(`the request body is not valid JSON: ${(error as Error).message}`);
  }
}

/** Serialises a response body; a `bigint` is written as a bare JSON number. */
export function stringifyJson(value: unknown): string {
  return stringify(value) ?? 'null';
}
