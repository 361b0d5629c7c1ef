import { TokenRequestError } from './token-request.error.js';

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^([1-9]\d{0,5})([smhd])$/;

/** Parses `--expires-in` values such as `30m`, `12h` or `90d` into milliseconds. */
export function parseLifetime(text: string): number {
  const match = DURATION.exec(text.trim());
  if (!match) {
    throw new TokenRequestError(
      `invalid lifetime "${text}": use seconds, minutes, hours or days, like 30m, 12h or 90d`,
    );
  }
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
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
