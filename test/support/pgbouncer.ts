import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort } from './built-service.js';
import { whenListening } from './loopback-server.js';

/** Debian's PgBouncer (1.18); `.ci/run` installs it when missing. */
export const PGBOUNCER = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find(existsSync);
/** PgBouncer refuses to run as root; as root it runs as this account. */
const UNPRIVILEGED = { name: 'nobody', uid: 65534, gid: 65534 };

export interface Pooler {
  /** `serverUrl` with PgBouncer's address instead of the server's. */
  urlFor(serverUrl: string): string;
  stop(): Promise<void>;
}

/**
 * PgBouncer in transaction pooling mode on a free loopback port, in front of the server
 * `adminUrl` names, for every database on it. Clients are not authenticated by PgBouncer
 * (loopback, the test's own); it logs in to the server with the admin URL's password.
 */
export async function startPgBouncer(adminUrl: string): Promise<Pooler> {
  if (!PGBOUNCER) throw new Error('pgbouncer is not installed');
  const server = new URL(adminUrl);
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'plant-store-pgbouncer-'));
  const user = decodeURIComponent(server.username);
  const quote = (value: string) => `"${value.replace(/"/g, '""')}"`;
  await writeFile(
    join(dir, 'userlist.txt'),
    `${quote(user)} ${quote(decodeURIComponent(server.password))}\n`,
  );
  await writeFile(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      'pool_mode = transaction',
      'default_pool_size = 4',
      'max_client_conn = 500',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      '',
    ].join('\n'),
  );
  const asRoot = userInfo().uid === 0;
  if (asRoot) {
    for (const file of ['', 'userlist.txt', 'pgbouncer.ini'])
      await chown(join(dir, file), UNPRIVILEGED.uid, UNPRIVILEGED.gid);
  }
  const child = spawn(
    PGBOUNCER,
    [...(asRoot ? ['-u', UNPRIVILEGED.name] : []), join(dir, 'pgbouncer.ini')],
    { stdio: 'ignore' },
  );
  const stop = await whenListening('pgbouncer', child, port, () =>
    rm(dir, { recursive: true, force: true }),
  );
  return {
    urlFor: (serverUrl) => {
      const url = new URL(serverUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.toString();
    },
    stop,
  };
}
