import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './built-service.js';
import { whenListening } from './loopback-server.js';

/** What deploy/haproxy/haproxy.cfg answers itself (`http-error`: the API's error shape). */
const DEPLOYED_ERROR_ANSWERS = readFileSync(
  fileURLToPath(new URL('../../deploy/haproxy/haproxy.cfg', import.meta.url)),
  'utf8',
)
  .split('\n')
  .filter((line) => line.trim().startsWith('http-error '));

/** Debian's HAProxy (2.6); `.ci/run` installs it when missing. */
export const HAPROXY = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find(existsSync);

/** What HAProxy's statistics say of one replica's server slot. */
export interface ServerState {
  /**
   * `UP`, `DOWN`, or on the way between them (`UP 1/2`: one failed check of the two that
   * `fall` asks for).
   */
  status: string;
  /**
   * The last readiness check's outcome (`check_status`): `L7OK`; `L7STS`, an answer other
   * than 200; `L4CON`, a refused connection.
   */
  lastCheck: string;
  /** Requests' sessions HAProxy sent to it so far (`stot`). */
  sessions: number;
}

export interface Balancer {
  url: string;
  pid: number;
  /** Each replica's server slot, in the order of the URLs it was started with. */
  servers(): Promise<ServerState[]>;
  stop(): Promise<void>;
}

/**
 * HAProxy on a free loopback port in front of these replicas, with the settings of
 * deploy/haproxy/haproxy.cfg (readiness checks, retries of failed connections, its own answers in the error shape) but a
 * static server list and faster checks, so that the test runs in seconds. A replica that
 * is restarted on the port it had takes its server slot back. The statistics come from
 * HAProxy's runtime API, on a Unix socket of its own.
 */
export async function startHaproxy(replicaUrls: string[]): Promise<Balancer> {
  if (!HAPROXY) throw new Error('haproxy is not installed');
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'plant-store-haproxy-'));
  const config = join(dir, 'haproxy.cfg');
  const runtimeApi = join(dir, 'runtime-api.sock');
  await writeFile(
    config,
    [
      'global',
      `  stats socket ${runtimeApi} mode 600 level operator`,
      'defaults',
      '  mode http',
      '  timeout connect 1s',
      '  timeout client 30s',
      '  timeout server 30s',
      '  retry-on conn-failure',
      '  retries 2',
      '  option redispatch',
      ...DEPLOYED_ERROR_ANSWERS,
      'frontend api',
      `  bind 127.0.0.1:${port}`,
      '  default_backend replicas',
      'backend replicas',
      '  balance roundrobin',
      '  option httpchk GET /health/ready',
      '  http-check expect status 200',
      // As long as a check may take in deploy/haproxy/haproxy.cfg (its `inter`, 1 s): on two
      // loaded shared cores a readiness answer can take longer than these checks' 250 ms.
      '  timeout check 1s',
      '  default-server inter 250ms fall 2 rise 2 check',
      ...replicaUrls.map((url, index) => `  server api${index} ${new URL(url).host}`),
      '',
    ].join('\n'),
  );
  const child = spawn(HAPROXY, ['-db', '-f', config], { stdio: 'ignore' });
  const stop = await whenListening('haproxy', child, port, () =>
    rm(dir, { recursive: true, force: true }),
  );
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    servers: async () => {
      const [header, ...rows] = (await ask(runtimeApi, 'show stat')).trim().split('\n');
      const columns = header.replace(/^# /, '').split(',');
      const field = (row: string[], name: string) => row[columns.indexOf(name)];
      const servers = rows
        .map((row) => row.split(','))
        .filter(
          (row) => field(row, 'pxname') === 'replicas' && /^api\d+$/.test(field(row, 'svname')),
        );
      return replicaUrls.map((_, index) => {
        const row = servers.find((server) => field(server, 'svname') === `api${index}`)!;
        return {
          status: field(row, 'status'),
          // A check under way is marked with a leading `* `.
          lastCheck: field(row, 'check_status').replace(/^\* /, ''),
          sessions: Number(field(row, 'stot')),
        };
      });
    },
    stop,
  };
}

/** One command to HAProxy's runtime API, which answers and closes the connection. */
function ask(socketPath: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let answer = '';
    const socket = createConnection(socketPath, () => socket.end(`${command}\n`));
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.once('end', () => resolve(answer));
    socket.once('error', reject);
  });
}
