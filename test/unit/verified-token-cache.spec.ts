import { afterEach, describe, expect, it, vi } from 'vitest';
import { VerifiedTokenCache } from '../../src/auth/verified-token-cache.js';

interface Token {
  name: string;
}

function cache(ttlMs = 60_000, maxEntries = 100, unknownTtlMs = 1_000) {
  const tokens = new VerifiedTokenCache<Token>(ttlMs, maxEntries, unknownTtlMs);
  tokens.startCaching();
  return tokens;
}

/** A load that counts how often the database would be asked. */
function counted(answer: Token | null | Error) {
  const load = vi.fn(async () => {
    if (answer instanceof Error) throw answer;
    return answer;
  });
  return load;
}

describe('VerifiedTokenCache', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('asks the database once for a token it keeps', async () => {
    const tokens = cache();
    const load = counted({ name: 'kept' });
    expect(await tokens.get('h', load)).toEqual({ name: 'kept' });
    expect(await tokens.get('h', load)).toEqual({ name: 'kept' });
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('holds a token only once it was found, until its entry expires or is evicted', async () => {
    vi.useFakeTimers();
    const tokens = cache(60_000);
    const pending = tokens.get('h', counted({ name: 'found' }));
    expect(tokens.holds('h')).toBe(false);
    await pending;
    expect(tokens.holds('h')).toBe(true);
    vi.advanceTimersByTime(60_000);
    expect(tokens.holds('h')).toBe(false);

    await tokens.get('e', counted({ name: 'evicted' }));
    tokens.evict('e');
    expect(tokens.holds('e')).toBe(false);
    await tokens.get('u', counted(null));
    expect(tokens.holds('u')).toBe(false);
  });

  it('shares one load between concurrent requests for one token', async () => {
    const tokens = cache();
    const load = counted({ name: 'shared' });
    await Promise.all([tokens.get('h', load), tokens.get('h', load), tokens.get('h', load)]);
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('asks again once an entry has outlived its lifetime', async () => {
    vi.useFakeTimers();
    const tokens = cache(5_000);
    const load = counted({ name: 'short' });
    await tokens.get('h', load);
    vi.advanceTimersByTime(5_001);
    await tokens.get('h', load);
    expect(load).toHaveBeenCalledTimes(2);
  });

  it('tells the load whether the token was valid until its entry expired', async () => {
    vi.useFakeTimers();
    const tokens = cache(5_000);
    const load = counted({ name: 'refreshed' });
    await tokens.get('h', load);
    vi.advanceTimersByTime(5_001);
    await tokens.get('h', load);
    expect(load.mock.calls).toEqual([[false], [true]]);
  });

  it('reloads a token in use in the second half of its life, answering from its entry meanwhile', async () => {
    vi.useFakeTimers();
    const tokens = cache(5_000);
    let finish!: (token: Token) => void;
    const loads: boolean[] = [];
    const load = (known: boolean) => {
      loads.push(known);
      return loads.length === 1
        ? Promise.resolve({ name: 'first' })
        : new Promise<Token | null>((resolve) => (finish = resolve));
    };
    await tokens.get('h', load);
    vi.advanceTimersByTime(2_000);
    await tokens.get('h', load);
    expect(loads).toEqual([false]);
    vi.advanceTimersByTime(1_000);
    expect(await tokens.get('h', load)).toEqual({ name: 'first' });
    expect(await tokens.get('h', load)).toEqual({ name: 'first' });
    expect(loads).toEqual([false, true]);
    finish({ name: 'reloaded' });
    await Promise.resolve();
    // The reloaded entry lives 5 s from the reload on, past the first one's end (and, in
    // its own second half, is reloaded in turn).
    vi.advanceTimersByTime(4_000);
    expect(await tokens.get('h', load)).toEqual({ name: 'reloaded' });
    expect(loads).toEqual([false, true, true]);
  });

  it('never answers from an entry past its lifetime, even while it is being reloaded', async () => {
    vi.useFakeTimers();
    const tokens = cache(5_000);
    const load = vi.fn((known: boolean) =>
      known && load.mock.calls.length === 2
        ? new Promise<Token | null>(() => undefined)
        : Promise.resolve({ name: `load ${load.mock.calls.length}` }),
    );
    await tokens.get('h', load);
    vi.advanceTimersByTime(3_000);
    await tokens.get('h', load);
    vi.advanceTimersByTime(2_001);
    expect(await tokens.get('h', load)).toEqual({ name: 'load 3' });
  });

  it('does not bring back an entry evicted while it was being reloaded', async () => {
    vi.useFakeTimers();
    const tokens = cache(5_000);
    let finish!: (token: Token) => void;
    let calls = 0;
    const load = () =>
      ++calls === 2
        ? new Promise<Token | null>((resolve) => (finish = resolve))
        : Promise.resolve({ name: `load ${calls}` });
    await tokens.get('h', load);
    vi.advanceTimersByTime(3_000);
    await tokens.get('h', load);
    tokens.evict('h');
    finish({ name: 'read before the revocation' });
    await Promise.resolve();
    expect(await tokens.get('h', load)).toEqual({ name: 'load 3' });
  });

  it('asks again after an eviction', async () => {
    const tokens = cache();
    const load = counted({ name: 'revoked' });
    await tokens.get('h', load);
    tokens.evict('h');
    await tokens.get('h', load);
    expect(load).toHaveBeenCalledTimes(2);
  });

  it('does not keep what a load evicted while it ran would have answered', async () => {
    const tokens = cache();
    let finish!: (token: Token) => void;
    const slow = () => new Promise<Token | null>((resolve) => (finish = resolve));
    const pending = tokens.get('h', slow);
    tokens.evict('h');
    finish({ name: 'read before the revocation' });
    await pending;
    const load = counted({ name: 'read after' });
    expect(await tokens.get('h', load)).toEqual({ name: 'read after' });
  });

  it('answers an unknown token unknown for unknownTtlMs without asking again', async () => {
    vi.useFakeTimers();
    const tokens = cache(60_000, 100, 1_000);
    const unknown = counted(null);
    for (let i = 0; i < 5; i++) expect(await tokens.get('u', unknown)).toBeNull();
    expect(unknown).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1_001);
    await tokens.get('u', unknown);
    expect(unknown).toHaveBeenCalledTimes(2);
  });

  it('asks again at once for an unknown token that was evicted (announced)', async () => {
    const tokens = cache();
    await tokens.get('u', counted(null));
    tokens.evict('u');
    expect(await tokens.get('u', counted({ name: 'created' }))).toEqual({ name: 'created' });
  });

  it('remembers at most maxEntries unknown tokens, apart from the valid ones', async () => {
    const tokens = cache(60_000, 2);
    const valid = counted({ name: 'valid' });
    await tokens.get('v', valid);
    const unknown = counted(null);
    for (const hash of ['u1', 'u2', 'u3', 'u1']) await tokens.get(hash, unknown);
    expect(unknown).toHaveBeenCalledTimes(4);
    await tokens.get('v', valid);
    expect(valid).toHaveBeenCalledTimes(1);
  });

  it('does not keep failed loads', async () => {
    const tokens = cache();
    const failing = counted(new Error('database down'));
    await expect(tokens.get('f', failing)).rejects.toThrow('database down');
    await expect(tokens.get('f', failing)).rejects.toThrow('database down');
    expect(failing).toHaveBeenCalledTimes(2);
  });

  it('keeps nothing until caching starts, and forgets everything when it stops', async () => {
    const tokens = new VerifiedTokenCache<Token>(60_000, 100);
    const load = counted({ name: 'x' });
    await tokens.get('h', load);
    await tokens.get('h', load);
    expect(load).toHaveBeenCalledTimes(2);
    tokens.startCaching();
    await tokens.get('h', load);
    tokens.stopCaching();
    await tokens.get('h', load);
    await tokens.get('h', load);
    expect(load).toHaveBeenCalledTimes(5);
  });

  it('holds at most maxEntries tokens, dropping the oldest first', async () => {
    const tokens = cache(60_000, 2);
    const loads = ['a', 'b', 'c'].map((name) => counted({ name }));
    for (const [i, load] of loads.entries()) await tokens.get(`h${i}`, load);
    for (const [i, load] of [...loads.entries()].reverse()) await tokens.get(`h${i}`, load);
    expect(loads.map((load) => load.mock.calls.length)).toEqual([2, 1, 1]);
  });
});
