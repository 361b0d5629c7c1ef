const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^([1-9]\d{0,5})([smhd])$/;

/**
 * A duration as this service takes them everywhere (`30s`, `10m`, `12h`, `90d`: a whole
 * number from 1 to 999999 and one unit), in milliseconds; undefined for anything else
 * (`1.5h`, `30`, `0d`, `30 days`).
 */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  return match ? Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS] : undefined;
}
