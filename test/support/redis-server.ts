import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { acceptsConnections, freePort } from './built-service.js';

/** Debian's redis-server; `.ci/run` installs it when missing. */
export const REDIS_SERVER = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find(
  existsSync,
);

export interface RedisServer {
  url: string;
  stop(): Promise<void>;
}

/** A Redis of the test's own, on a free loopback port, keeping nothing on disk. */
export async function startRedisServer(): Promise<RedisServer> {
  if (!REDIS_SERVER) throw new Error('redis-server is not installed');
  const port = await freePort();
  const child: ChildProcess = spawn(
    REDIS_SERVER,
    ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  for (let attempt = 0; !(await acceptsConnections(port)); attempt++) {
    if (attempt === 100) {
      await stop();
      throw new Error('redis-server did not start');
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { url: `redis://127.0.0.1:${port}`, stop };
}
