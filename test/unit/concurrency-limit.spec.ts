import { describe, expect, it } from 'vitest';
import { ConcurrencyLimit } from '../../src/common/concurrency/concurrency-limit.js';

/** A task that records when it starts and finishes when told to. */
function task(name: string, started: string[]) {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return { run: async () => (started.push(name), done), finish };
}

describe('ConcurrencyLimit', () => {
  it('runs at most `limit` tasks at once, the others in their order of arrival', async () => {
    const limit = new ConcurrencyLimit(2);
    const started: string[] = [];
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((name) => task(name, started));
    const runs = [a, b, c, d].map(({ run }) => limit.run(run));
    await Promise.resolve();
    expect(started).toEqual(['a', 'b']);
    a.finish();
    await runs[0];
    await Promise.resolve();
    expect(started).toEqual(['a', 'b', 'c']);
    b.finish();
    c.finish();
    d.finish();
    await Promise.all(runs);
    expect(started).toEqual(['a', 'b', 'c', 'd']);
  });

  it('lets an urgent task go ahead of those waiting', async () => {
    const limit = new ConcurrencyLimit(1);
    const started: string[] = [];
    const [a, b, urgent] = ['a', 'b', 'urgent'].map((name) => task(name, started));
    const runs = [limit.run(a.run), limit.run(b.run), limit.run(urgent.run, true)];
    a.finish();
    urgent.finish();
    b.finish();
    await Promise.all(runs);
    expect(started).toEqual(['a', 'urgent', 'b']);
  });
});
