import { parse, stringify } from 'lossless-json';
import { parseJsonNumber } from './json-number.js';

/** Invalid UTF-8 is refused rather than silently replaced with U+FFFD. */
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * How deep arrays and objects may nest in a body. A plant is one level; without a bound,
 * a 64 KiB body nests thousands deep and exhausts the stack of whatever walks it.
 */
export const MAX_JSON_DEPTH = 64;

export class JsonBodyError extends Error {
  override name = 'JsonBodyError';
}

/** Whether `text` nests arrays and objects deeper than MAX_JSON_DEPTH (strings skipped). */
function nestsTooDeep(text: string): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const character = text[index];
    if (inString) {
      if (character === '\\') index++;
      else if (character === '"') inString = false;
    } else if (character === '"') {
      inString = true;
    } else if (character === '{' || character === '[') {
      if (++depth > MAX_JSON_DEPTH) return true;
    } else if (character === '}' || character === ']') {
      depth--;
    }
  }
  return false;
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
  if (nestsTooDeep(text)) {
    throw new JsonBodyError(
      `the request body nests arrays or objects more than ${MAX_JSON_DEPTH} levels deep`,
    );
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
