import { describe, expect, it } from 'vitest';
import { BatchingQueue } from '../../src/database/batching-queue.js';
import {
  DatabaseUnavailableError,
  isDatabaseUnavailable,
} from '../../src/database/database-errors.js';

/** A write whose statements the test completes (or fails) by hand, in any order. */
function controlledWrite() {
  const statements: {
    items: number[];
    commit(): Promise<void>;
    fail(error: Error): Promise<void>;
  }[] = [];
  const write = (items: number[]) =>
    new Promise<string[]>((resolve, reject) => {
      statements.push({
        items,
        commit: async () => {
          resolve(items.map((item) => `stored ${item}`));
          await settle();
        },
        fail: async (error) => {
          reject(error);
          await settle();
        },
      });
    });
  return { write, statements };
}

/** A deadline no test reaches. */
const LONG = 60_000;

/** Lets every pending promise callback run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

function tracked<T>(promise: Promise<T>) {
  const state: { value?: T; error?: unknown; settled: boolean } = { settled: false };
  promise.then(
    (value) => Object.assign(state, { value, settled: true }),
    (error: unknown) => Object.assign(state, { error, settled: true }),
  );
  return state;
}

describe('BatchingQueue', () => {
  it('sends an item at once, alone, when no statement is in flight', async () => {
    const { write, statements } = controlledWrite();
    const commits = new BatchingQueue(write, {
      spanName: 'test batch',
      concurrency: 1,
      maxBatch: 100,
      deadlineMs: LONG,
    });
    const first = tracked(commits.submit(1));
    await settle();
    expect(statements.map((s) => s.items)).toEqual([[1]]);
    await statements[0].commit();
    expect(first).toEqual({ value: 'stored 1', settled: true });
  });

  it('gathers the items that arrive while a statement is in flight into the next one', async () => {
    const { write, statements } = controlledWrite();
    const commits = new BatchingQueue(write, {
      spanName: 'test batch',
      concurrency: 1,
      maxBatch: 100,
      deadlineMs: LONG,
    });
    const results = [1, 2, 3, 4].map((item) => tracked(commits.submit(item)));
    await settle();
    expect(statements.map((s) => s.items)).toEqual([[1]]);

    await statements[0].commit();
    expect(statements.map((s) => s.items)).toEqual([[1], [2, 3, 4]]);
    expect(results.map((r) => r.settled)).toEqual([true, false, false, false]);

    await statements[1].commit();
    expect(results.map((r) => r.value)).toEqual(['stored 1', 'stored 2', 'stored 3', 'stored 4']);
  });

  it('keeps up to `concurrency` statements in flight, and settles each with its own', async () => {
    const { write, statements } = controlledWrite();
    const commits = new BatchingQueue(write, {
      spanName: 'test batch',
      concurrency: 2,
      maxBatch: 100,
      deadlineMs: LONG,
    });
    const results = [1, 2, 3, 4].map((item) => tracked(commits.submit(item)));
    await settle();
    expect(statements.map((s) => s.items)).toEqual([[1], [2]]);

    await statements[1].commit();
    expect(results.map((r) => r.settled)).toEqual([false, true, false, false]);
    expect(statements.map((s) => s.items)).toEqual([[1], [2], [3, 4]]);
  });

  it('puts at most maxBatch items in one statement', async () => {
    const { write, statements } = controlledWrite();
    const commits = new BatchingQueue(write, {
      spanName: 'test batch',
      concurrency: 1,
      maxBatch: 2,
      deadlineMs: LONG,
    });
    [1, 2, 3, 4, 5, 6].forEach((item) => commits.submit(item));
    await settle();
    await statements[0].commit();
    await statements[1].commit();
    await statements[2].commit();
    expect(statements.map((s) => s.items)).toEqual([[1], [2, 3], [4, 5], [6]]);
  });

  it("fails only the items of the statement that failed, with that statement's error", async () => {
    const { write, statements } = controlledWrite();
    const commits = new BatchingQueue(write, {
      spanName: 'test batch',
      concurrency: 1,
      maxBatch: 100,
      deadlineMs: LONG,
    });
    const results = [1, 2, 3].map((item) => tracked(commits.submit(item)));
    await settle();
    await statements[0].commit();
    const failure = new Error('connection lost');
    await statements[1].fail(failure);
    expect(results.map((r) => r.error)).toEqual([undefined, failure, failure]);

    const later = tracked(commits.submit(4));
    await settle();
    await statements[2].commit();
    expect(later.value).toBe('stored 4');
  });

  it('turns a write that throws at once into a failed batch', async () => {
    const commits = new BatchingQueue<number, string>(
      () => {
        throw new Error('bad batch');
      },
      { spanName: 'test batch', concurrency: 1, maxBatch: 100, deadlineMs: LONG },
    );
    await expect(commits.submit(1)).rejects.toThrow('bad batch');
  });

  it('splits a batch that one item failed until each item has its own outcome', async () => {
    const refused = new Error('value refused');
    // A statement fails whenever it carries item 3; nothing of it is written then.
    const write = (items: number[]) =>
      items.includes(3)
        ? Promise.reject(refused)
        : Promise.resolve(items.map((item) => `stored ${item}`));
    const sent: number[][] = [];
    const commits = new BatchingQueue<number, string>((items) => (sent.push(items), write(items)), {
      spanName: 'test batch',
      concurrency: 1,
      maxBatch: 100,
      deadlineMs: LONG,
      isItemError: (error) => error === refused,
    });
    const results = [1, 2, 3, 4, 5].map((item) => tracked(commits.submit(item)));
    await expect.poll(() => results.every((r) => r.settled)).toBe(true);

    expect(results.map((r) => r.value ?? r.error)).toEqual([
      'stored 1',
      'stored 2',
      refused,
      'stored 4',
      'stored 5',
    ]);
    expect(sent).toEqual([[1], [2, 3, 4, 5], [2, 3], [4, 5], [2], [3]]);
  });

  it('does not split a batch for an error no single item causes', async () => {
    const { write, statements } = controlledWrite();
    const commits = new BatchingQueue(write, {
      spanName: 'test batch',
      concurrency: 1,
      maxBatch: 100,
      deadlineMs: LONG,
      isItemError: () => false,
    });
    const results = [1, 2, 3].map((item) => tracked(commits.submit(item)));
    await settle();
    await statements[0].commit();
    await statements[1].fail(new Error('connection lost'));
    expect(statements).toHaveLength(2);
    expect(results.map((r) => r.settled)).toEqual([true, true, true]);
  });

  it('rejects an item at its deadline with a 503 cause, whether sent or waiting, and never sends a waiting one after', async () => {
    const { write, statements } = controlledWrite();
    const commits = new BatchingQueue(write, {
      spanName: 'test batch',
      concurrency: 1,
      maxBatch: 100,
      deadlineMs: 50,
    });
    // 1 goes out at once and its statement hangs; 2 and 3 wait behind it.
    const results = [1, 2, 3].map((item) => tracked(commits.submit(item)));
    await expect.poll(() => results.every((r) => r.settled)).toBe(true);
    for (const { error } of results) {
      expect(error).toBeInstanceOf(DatabaseUnavailableError);
      expect(isDatabaseUnavailable(error)).toBe(true);
    }
    // The hung statement ends: the expired items are not sent, a new one is.
    await statements[0].fail(new Error('query read timeout'));
    const later = tracked(commits.submit(4));
    await settle();
    expect(statements.map(({ items }) => items)).toEqual([[1], [4]]);
    await statements[1].commit();
    expect(later.value).toBe('stored 4');
  });
});
