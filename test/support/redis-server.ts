import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { freePort } from './built-service.js';
import { whenListening } from './loopback-server.js';

/** Debian's redis-server; `.ci/run` installs it when missing. */
export const REDIS_SERVER = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find(
  existsSync,
);

export interface RedisServer {
  url: string;
  /** SIGSTOP: connections stay open and nothing is answered, as a hung Redis does. */
  freeze(): void;
  /** SIGCONT: it answers again, what it was sent meanwhile first. */
  thaw(): void;
  stop(): Promise<void>;
}

/** A Redis of the test's own, on a free loopback port, keeping nothing on disk. */
export async function startRedisServer(): Promise<RedisServer> {
  if (!REDIS_SERVER) throw new Error('redis-server is not installed');
  const port = await freePort();
  const child = spawn(
    REDIS_SERVER,
    ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const stop = await whenListening('redis-server', child, port);
  return {
    url: `redis://127.0.0.1:${port}`,
    freeze: () => child.kill('SIGSTOP'),
    thaw: () => child.kill('SIGCONT'),
    // A frozen process would not see SIGKILL's effects reported until it runs again.
    stop: async () => {
      child.kill('SIGCONT');
      await stop();
    },
  };
}
