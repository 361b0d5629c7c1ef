import { parseDuration } from '../common/duration/duration.js';
import { TokenRequestError } from './token-request.error.js';

/** Parses `--expires-in` values such as `30m`, `12h` or `90d` into milliseconds. */
export function parseLifetime(text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined) {
    throw new TokenRequestError(
      `invalid lifetime "${text}": use seconds, minutes, hours or days, like 30m, 12h or 90d`,
    );
  }
  return ms;
}

/**
 * Parses `token rotate --overlap` values: a duration as for `--expires-in`, or `0`, for
 * an old token refused at once.
 */
export function parseOverlap(text: string): number {
  if (text.trim() === '0') return 0;
  try {
    return parseLifetime(text);
  } catch {
    throw new TokenRequestError(
      `invalid overlap "${text}": use 0, or seconds, minutes, hours or days, like 30s, 1h or 7d`,
    );
  }
}
