import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';

/**
 * Creates `count` plants from `firstId` on, at `perSecond` (open loop: each at its time,
 * whether or not the ones before were answered), and answers when each was answered 200.
 */
export async function createAtRate(
  create: (id: number) => Promise<number>,
  firstId: number,
  count: number,
  perSecond: number,
): Promise<Map<number, number>> {
  const answeredAt = new Map<number, number>();
  const startedAt = performance.now();
  const creates: Promise<void>[] = [];
  for (let index = 0; index < count; index++) {
    const due = startedAt + (index * 1_000) / perSecond;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const id = firstId + index;
    creates.push(
      create(id).then((status) => {
        expect(status).toBe(200);
        answeredAt.set(id, performance.now());
      }),
    );
  }
  await Promise.all(creates);
  return answeredAt;
}
