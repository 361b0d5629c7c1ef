import { parseJsonNumber } from '../common/json/json-number.js';
import { decodeCursor, encodeCursor } from '../common/pagination/keyset-cursor.js';
import { isInt64 } from '../common/validation/is-int64.decorator.js';

/** Where the next page of GET /plants starts: the last id of the page (its decimal digits). */
export function encodePlantCursor(lastId: bigint): string {
  return encodeCursor(lastId.toString());
}

/** The plant id a cursor's text names, if it names one. */
export function readPlantId(text: string): bigint | undefined {
  const id = parseJsonNumber(text);
  return isInt64(id) ? BigInt(id) : undefined;
}

/** The id a cursor stands for; undefined unless `cursor` is exactly what the service issues. */
export function decodePlantCursor(cursor: string): bigint | undefined {
  return decodeCursor(cursor, readPlantId);
}
