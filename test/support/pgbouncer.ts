import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './built-service.js';
import { whenListening } from './loopback-server.js';
import { TEST_OWNER_ROLE, TEST_ROLE_PASSWORD, TEST_SERVICE_ROLE } from './test-database.js';

/** Debian's PgBouncer (1.18); `.ci/run` installs it when missing. */
export const PGBOUNCER = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find(existsSync);
/** PgBouncer refuses to run as root; as root it runs as this account. */
const UNPRIVILEGED = { name: 'nobody', uid: 65534, gid: 65534 };
/** The configuration docker-compose.yml runs (transaction pooling, pool sizes). */
const DEPLOYED_CONFIG = fileURLToPath(
  new URL('../../deploy/pgbouncer/pgbouncer.ini', import.meta.url),
);

export interface Pooler {
  pid: number;
  /** `serverUrl` with PgBouncer's address instead of the server's. */
  urlFor(serverUrl: string): string;
  stop(): Promise<void>;
}

/**
 * PgBouncer with the configuration of deploy/pgbouncer/pgbouncer.ini (transaction
 * pooling) on a free loopback port, in front of the server `adminUrl` names, for every
 * database on it. Only the addresses differ, and clients are not authenticated by
 * PgBouncer (loopback, the test's own); it logs in to the server with the admin URL's
 * password, or the test roles'.
 */
export async function startPgBouncer(adminUrl: string): Promise<Pooler> {
  if (!PGBOUNCER) throw new Error('pgbouncer is not installed');
  const server = new URL(adminUrl);
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'plant-store-pgbouncer-'));
  const user = decodeURIComponent(server.username);
  const quote = (value: string) => `"${value.replace(/"/g, '""')}"`;
  const users = [
    [user, decodeURIComponent(server.password)],
    // The roles the test databases are used with (test-database.ts).
    ...[TEST_OWNER_ROLE, TEST_SERVICE_ROLE].map((role) => [role, TEST_ROLE_PASSWORD]),
  ];
  await writeFile(
    join(dir, 'userlist.txt'),
    users.map(([name, password]) => `${quote(name)} ${quote(password)}\n`).join(''),
  );
  await writeFile(
    join(dir, 'pgbouncer.ini'),
    withSettings(await readFile(DEPLOYED_CONFIG, 'utf8'), {
      '*': `host=${server.hostname} port=${server.port || 5432}`,
      listen_addr: '127.0.0.1',
      listen_port: String(port),
      auth_type: 'trust',
      auth_file: join(dir, 'userlist.txt'),
    }),
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
    pid: child.pid!,
    urlFor: (serverUrl) => {
      const url = new URL(serverUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.toString();
    },
    stop,
  };
}

/**
 * The configuration with these settings' values replaced, each where the file sets it.
 * (Appending them would not do: a second `[pgbouncer]` section starts from the defaults.)
 */
function withSettings(config: string, settings: Record<string, string>): string {
  const replaced = new Set<string>();
  const lines = config.split('\n').map((line) => {
    const name = /^([\w*]+)\s*=/.exec(line)?.[1];
    if (name === undefined || !(name in settings)) return line;
    replaced.add(name);
    return `${name} = ${settings[name]}`;
  });
  const missing = Object.keys(settings).filter((name) => !replaced.has(name));
  if (missing.length > 0) throw new Error(`${DEPLOYED_CONFIG} sets no ${missing.join(', ')}`);
  return lines.join('\n');
}
