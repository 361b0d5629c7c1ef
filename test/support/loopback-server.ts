import type { ChildProcess } from 'node:child_process';
import { acceptsConnections } from './built-service.js';

/** How long a helper server (Redis, PgBouncer, HAProxy) may take to listen. */
const START_LIMIT_MS = 5_000;

/**
 * Waits until `child` accepts connections on its loopback `port`, and answers how to stop
 * it: kill it, then `cleanUp` (its files). If it exits or does not listen in time, it is
 * stopped and this throws.
 */
export async function whenListening(
  name: string,
  child: ChildProcess,
  port: number,
  cleanUp: () => Promise<void> = async () => undefined,
): Promise<() => Promise<void>> {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    await cleanUp();
  };
  const deadline = Date.now() + START_LIMIT_MS;
  while (!(await acceptsConnections(port))) {
    if (Date.now() > deadline || child.exitCode !== null) {
      await stop();
      throw new Error(`${name} did not start`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return stop;
}
