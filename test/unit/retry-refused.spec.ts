import { QueryFailedError } from 'typeorm';
import { describe, expect, it } from 'vitest';
import { REFUSAL_ATTEMPTS, retryRefused } from '../../src/database/retry-refused.js';

const refused = (code: string) =>
  new QueryFailedError('UPDATE …', [], Object.assign(new Error('refused'), { code }));

/** Work that fails with each of `failures` in turn, then answers 'done'; and the pauses taken. */
function workFailingWith(...failures: Error[]) {
  const run = { attempts: 0, pauses: [] as number[] };
  const work = async () => {
    const failure = failures[run.attempts++];
    if (failure) throw failure;
    return 'done';
  };
  const pause = async (ms: number) => run.pauses.push(ms);
  return { run, go: () => retryRefused(work, pause) };
}

describe('retryRefused', () => {
  it.each(['25006', '40001', '40P01'])(
    'runs work refused with SQLSTATE %s again, after a short pause',
    async (code) => {
      const { run, go } = workFailingWith(refused(code));
      await expect(go()).resolves.toBe('done');
      expect(run.attempts).toBe(2);
      expect(run.pauses).toHaveLength(1);
      expect(run.pauses[0]).toBeLessThan(20);
    },
  );

  it(`gives up after ${REFUSAL_ATTEMPTS} attempts with the last refusal, pausing longer each time`, async () => {
    const { run, go } = workFailingWith(
      ...Array.from({ length: REFUSAL_ATTEMPTS }, () => refused('40P01')),
    );
    await expect(go()).rejects.toMatchObject({ driverError: { code: '40P01' } });
    expect(run.attempts).toBe(REFUSAL_ATTEMPTS);
    expect(run.pauses).toHaveLength(REFUSAL_ATTEMPTS - 1);
    expect(run.pauses[1]).toBeLessThan(40);
  });

  it.each([
    ['a lost connection (a commit may have happened)', new Error('Connection terminated')],
    ['a lock time-out (it would wait as long again)', refused('55P03')],
    ['a unique violation', refused('23505')],
  ])('does not run work again after %s', async (_what, failure) => {
    const { run, go } = workFailingWith(failure);
    await expect(go()).rejects.toBe(failure);
    expect(run.attempts).toBe(1);
  });
});
