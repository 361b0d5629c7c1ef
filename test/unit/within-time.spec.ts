import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { withinTime } from '../../src/rate-limit/within-time.js';

/** Keeps the event loop busy, as a loaded process is, for `ms`. */
function busyFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('withinTime', () => {
  it('answers the value of work that settles in time', async () => {
    await expect(withinTime(Promise.resolve(42), 50)).resolves.toEqual({ value: 42 });
  });

  it('answers undefined once time runs out, and passes on a rejection', async () => {
    await expect(withinTime(new Promise(() => undefined), 10)).resolves.toBeUndefined();
    await expect(withinTime(Promise.reject(new Error('refused')), 50)).rejects.toThrow('refused');
  });

  it('reads an answer that arrived while the event loop was busy before deciding time ran out', async () => {
    // An echo server in a process of its own: it answers while this one is busy.
    const server = spawn(
      process.execPath,
      [
        '-e',
        `require('node:net').createServer((s) => s.on('data', (d) => s.write(d)))
           .listen(0, '127.0.0.1', function () { console.log(this.address().port); });`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const [port] = (await once(server.stdout!, 'data')) as [Buffer];
    const client = connect(Number(String(port)), '127.0.0.1');
    await once(client, 'connect');
    try {
      const echoed = once(client, 'data').then(([data]) => String(data));
      client.write('ping');
      const answer = withinTime(echoed, 10);
      // The echo arrives within a millisecond, while this process is busy for 100 ms: the
      // timer is then overdue, but the answer is there to be read.
      busyFor(100);
      await expect(answer).resolves.toEqual({ value: 'ping' });
    } finally {
      client.destroy();
      server.kill();
    }
  });
});
