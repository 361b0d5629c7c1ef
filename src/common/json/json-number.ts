/** The JSON number grammar (RFC 8259): no leading zeros, no `+`, no bare `.5` or `5.`. */
const NUMBER_LITERAL = /^-?(0|[1-9]\d*)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;
/** Integers with more digits than this are outside int64 and are not materialised. */
const MAX_INTEGER_DIGITS = 19;
const ZERO = 0x30;

/**
 * Where the significant digits of `digits` start and end, scanned by hand: a regular
 * expression such as `/0+$/` retries at every zero of a run and takes quadratic time on
 * `1000…0001`, and a body reaches this before any guard runs.
 */
function significantBounds(digits: string): { start: number; end: number } {
  let start = 0;
  while (start < digits.length && digits.charCodeAt(start) === ZERO) start++;
  let end = digits.length;
  while (end > start && digits.charCodeAt(end - 1) === ZERO) end--;
  return { start, end };
}

/**
 * Turns a JSON number literal into a JS value without losing what it says:
 * - anything that is not a JSON number literal becomes NaN;
 * - an integer (as in JSON Schema: `1.0` and `1e3` are integers) becomes a `number`
 *   when it is a safe integer and a `bigint` when it needs up to 19 digits;
 * - any other number becomes a `number`, unless rounding would make it look like an
 *   integer (`1.0000000000000000001`), or it is an integer too large for int64: then it
 *   becomes NaN, which no integer rule accepts (and nothing is stored from it).
 */
export function parseJsonNumber(literal: string): number | bigint {
  const match = NUMBER_LITERAL.exec(literal);
  if (!match) return Number.NaN;
  const [, integerPart, fraction = '', exponent = '0'] = match;
  const negative = literal.startsWith('-');
  const allDigits = integerPart + fraction;
  const { start, end } = significantBounds(allDigits);
  const significant = allDigits.slice(start, end);
  const pointPosition = integerPart.length - start + Number(exponent);

  if (significant === '') return 0;
  const isInteger = significant.length <= pointPosition;
  if (isInteger) {
    if (pointPosition > MAX_INTEGER_DIGITS) return Number.NaN;
    const magnitude = BigInt(significant.padEnd(pointPosition, '0'));
    const value = negative ? -magnitude : magnitude;
    return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(value)
      : value;
  }
  const value = Number(literal);
  return Number.isInteger(value) ? Number.NaN : value;
}
