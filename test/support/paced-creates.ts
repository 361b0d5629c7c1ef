import type { Agent } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';

/**
 * Creates `count` plants from `firstId` on, at `perSecond` (open loop: each at its time,
 * whether or not the ones before were answered), expects every one answered 200, and
 * answers when each was.
 */
export async function createAtRate(
  create: (id: number) => Promise<number>,
  firstId: number,
  count: number,
  perSecond: number,
): Promise<Map<number, number>> {
  const answeredAt = new Map<number, number>();
  /** Each create's status, or its error: settled as they come, checked at the end. */
  const outcomes: Promise<[number, string]>[] = [];
  const startedAt = performance.now();
  for (let index = 0; index < count; index++) {
    const due = startedAt + (index * 1_000) / perSecond;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const id = firstId + index;
    outcomes.push(
      create(id).then(
        (status) => {
          answeredAt.set(id, performance.now());
          return [id, String(status)];
        },
        (error: Error) => [id, error.message],
      ),
    );
  }
  const failed = (await Promise.all(outcomes)).filter(([, outcome]) => outcome !== '200');
  expect(failed).toEqual([]);
  return answeredAt;
}

/**
 * A create sent over a kept-alive connection of `agent` and, if that connection fails under
 * it, once more on a new one, as docs/operations/configuration.md tells clients to: a kept-alive
 * connection reused just as its idle time-out closes it (the service's, or a balancer's
 * in front) ends in a reset or a hang-up with no answer, and a create is safe to resend
 * (a replay answers 200).
 */
export function resendOnNewConnection(
  create: (agent: Agent | undefined) => Promise<number>,
  agent: Agent,
): Promise<number> {
  return create(agent).catch(() => create(undefined));
}
