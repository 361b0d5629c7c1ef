/** Each wait is this many times the one before. */
const BACKOFF_FACTOR = 3;
/** Each wait is drawn within ±25 % of its step, so that receivers back up are not hit all at once. */
const JITTER = 0.25;
/** No wait is longer than a day, whatever WEBHOOK_RETRY_BASE_MS and the attempt. */
const MAX_STEP_MS = 86_400_000;

/**
 * The wait before attempt `attempts + 1`, after `attempts` failed ones: exponential
 * back-off from `baseMs`, with jitter (`random` in [0, 1)). From 10 s, the 9 waits
 * between 10 attempts add up to about 27 hours.
 */
export function retryDelayMs(attempts: number, baseMs: number, random = Math.random()): number {
  const step = Math.min(baseMs * BACKOFF_FACTOR ** (attempts - 1), MAX_STEP_MS);
  return Math.round(step * (1 - JITTER + 2 * JITTER * random));
}
