import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './built-service.js';
import { whenListening } from './loopback-server.js';

/** Debian's HAProxy (2.6); `.ci/run` installs it when missing. */
export const HAPROXY = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find(existsSync);

export interface Balancer {
  url: string;
  stop(): Promise<void>;
}

/**
 * HAProxy on a free loopback port in front of these replicas, with the settings of
 * deploy/haproxy/haproxy.cfg (readiness checks, retries of failed connections) but a
 * static server list and faster checks, so that the test runs in seconds.
 */
export async function startHaproxy(replicaUrls: string[]): Promise<Balancer> {
  if (!HAPROXY) throw new Error('haproxy is not installed');
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'plant-store-haproxy-'));
  const config = join(dir, 'haproxy.cfg');
  await writeFile(
    config,
    [
      'defaults',
      '  mode http',
      '  timeout connect 1s',
      '  timeout client 30s',
      '  timeout server 30s',
      '  retry-on conn-failure',
      '  retries 2',
      '  option redispatch',
      'frontend api',
      `  bind 127.0.0.1:${port}`,
      '  default_backend replicas',
      'backend replicas',
      '  balance roundrobin',
      '  option httpchk GET /health/ready',
      '  http-check expect status 200',
      '  default-server inter 250ms fall 2 rise 2 check',
      ...replicaUrls.map((url, index) => `  server api${index} ${new URL(url).host}`),
      '',
    ].join('\n'),
  );
  const child = spawn(HAPROXY, ['-db', '-f', config], { stdio: 'ignore' });
  const stop = await whenListening('haproxy', child, port, () =>
    rm(dir, { recursive: true, force: true }),
  );
  return { url: `http://127.0.0.1:${port}`, stop };
}
