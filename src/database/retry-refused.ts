import { setTimeout as sleep } from 'node:timers/promises';
import { isRetryableRefusal } from './database-errors.js';

/** Tries in all, the first included: a refusal that outlasts them is the client's 503. */
export const REFUSAL_ATTEMPTS = 3;
/** The first pause; each later one doubles it, and each is drawn at random up to it. */
const FIRST_PAUSE_MS = 20;

/**
 * Runs `work` (one statement, or one whole transaction) again when the database refused
 * it without effect (see isRetryableRefusal): a deadlock or serialization failure, or a
 * server that takes no writes, whose connection is discarded (see DatabaseWrites), so
 * the next try may reach the new primary. At most REFUSAL_ATTEMPTS tries, with a short
 * random pause between them so that racing transactions do not meet again in step
 * (about 60 ms at most in all). Only for work with no effect outside the database.
 */
export async function retryRefused<T>(
  work: () => Promise<T>,
  pause: (ms: number) => Promise<unknown> = sleep,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= REFUSAL_ATTEMPTS || !isRetryableRefusal(error)) throw error;
      await pause(Math.random() * FIRST_PAUSE_MS * 2 ** (attempt - 1));
    }
  }
}
