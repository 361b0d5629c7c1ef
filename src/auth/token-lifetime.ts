import { TokenRequestError } from './token-request.error.js';

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^([1-9]\d{0,5})([mhd])$/;

/** Parses `--expires-in` values such as `30m`, `12h` or `90d` into milliseconds. */
export function parseLifetime(text: string): number {
  const match = DURATION.exec(text.trim());
  if (!match) {
    throw new TokenRequestError(
      `invalid lifetime "${text}": use minutes, hours or days, like 30m, 12h or 90d`,
    );
  }
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}
