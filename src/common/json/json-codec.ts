import { parse } from 'lossless-json';
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

/** What a scan of a body's text outside its strings finds, before anything parses it. */
interface TextShape {
  /** It nests arrays and objects deeper than MAX_JSON_DEPTH. */
  tooDeep: boolean;
  /** Its object members: one `:` each, in valid JSON. */
  members: number;
  /** Every number in it is an integer of at most 15 digits, which a double holds exactly. */
  shortIntegersOnly: boolean;
}

const DIGITS_A_DOUBLE_HOLDS = 15;

/** The characters the scan looks for, as char codes: comparing numbers is what is fast. */
const [QUOTE, BACKSLASH, COLON, MINUS, POINT, ZERO, NINE, LOWER_E, UPPER_E] = [...'"\\:-.09eE'].map(
  (character) => character.charCodeAt(0),
);
const OPENING = new Set([...'{['].map((character) => character.charCodeAt(0)));
const CLOSING = new Set([...'}]'].map((character) => character.charCodeAt(0)));

function shapeOf(text: string): TextShape {
  let depth = 0;
  let members = 0;
  let shortIntegersOnly = true;
  let digitRun = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === BACKSLASH) index++;
      else if (code === QUOTE) inString = false;
      continue;
    }
    if (code >= ZERO && code <= NINE) {
      // -0 too: it is 0 in lossless-json's reading.
      if (
        ++digitRun > DIGITS_A_DOUBLE_HOLDS ||
        (code === ZERO && text.charCodeAt(index - 1) === MINUS)
      ) {
        shortIntegersOnly = false;
      }
      continue;
    }
    // A fraction or an exponent (the `e` of true and false follows no digit).
    if (code === POINT || code === UPPER_E || (code === LOWER_E && digitRun > 0)) {
      shortIntegersOnly = false;
    }
    digitRun = 0;
    if (code === QUOTE) {
      inString = true;
    } else if (code === COLON) {
      members++;
    } else if (OPENING.has(code)) {
      if (++depth > MAX_JSON_DEPTH) return { tooDeep: true, members, shortIntegersOnly };
    } else if (CLOSING.has(code)) {
      depth--;
    }
  }
  return { tooDeep: false, members, shortIntegersOnly };
}

/** The object members in a parsed value, however deep. */
function membersIn(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  let members = 0;
  if (Array.isArray(value)) {
    for (const item of value) members += membersIn(item);
  } else {
    for (const member of Object.values(value)) members += 1 + membersIn(member);
  }
  return members;
}

/**
 * V8's own parser, several times faster than lossless-json, where it reads the text
 * exactly as lossless-json would: every number a short integer, and no key twice (as
 * many members parsed as the text has; JSON.parse would keep the last of a duplicate,
 * which lossless-json refuses unless the values are equal). Undefined: lossless-json is
 * to read it, as it is for invalid JSON (its messages say where).
 */
function parseExactly(text: string, shape: TextShape): { value: unknown } | undefined {
  if (!shape.shortIntegersOnly) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return membersIn(value) === shape.members ? { value } : undefined;
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
  const shape = shapeOf(text);
  if (shape.tooDeep) {
    throw new JsonBodyError(
      `the request body nests arrays or objects more than ${MAX_JSON_DEPTH} levels deep`,
    );
  }
  const parsed = parseExactly(text, shape);
  if (parsed) return parsed.value;
  try {
    return parse(text, null, parseJsonNumber);
  } catch (error) {
    throw new JsonBodyError(`the request body is not valid JSON: ${(error as Error).message}`);
  }
}

declare global {
  interface JSON {
    /** A value JSON.stringify writes as this text, verbatim (ES2026; V8 since 11.4). */
    rawJSON(text: string): unknown;
  }
}

/**
 * `value` with each bigint as a JSON.rawJSON of its digits. JSON.stringify is several
 * times slower with a replacer function than on a copy made by this walk.
 */
function withExactIntegers(value: unknown): unknown {
  if (typeof value === 'bigint') return JSON.rawJSON(value.toString());
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(withExactIntegers);
  // JSON.stringify calls it: a Date writes itself.
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return value;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const member = withExactIntegers((value as Record<string, unknown>)[key]);
    // Assigned, a "__proto__" member would set the copy's prototype instead.
    if (key === '__proto__') Object.defineProperty(copy, key, { value: member, enumerable: true });
    else copy[key] = member;
  }
  return copy;
}

/** Serialises a response body; a `bigint` is written as a bare JSON number. */
export function stringifyJson(value: unknown): string {
  return JSON.stringify(withExactIntegers(value)) ?? 'null';
}
