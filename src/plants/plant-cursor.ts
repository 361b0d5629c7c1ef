import { parseJsonNumber } from '../common/json/json-number.js';
import { isInt64 } from '../common/validation/is-int64.decorator.js';

/**
 * Where the next page of GET /plants starts: the last id of the page, opaque to clients
 * (base64url of its decimal digits).
 */
export function encodePlantCursor(lastId: bigint): string {
  return Buffer.from(lastId.toString()).toString('base64url');
}

/** The id a cursor stands for; undefined unless `cursor` is exactly what the service issues. */
export function decodePlantCursor(cursor: string): bigint | undefined {
  const lastId = parseJsonNumber(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!isInt64(lastId)) return undefined;
  return encodePlantCursor(BigInt(lastId)) === cursor ? BigInt(lastId) : undefined;
}
