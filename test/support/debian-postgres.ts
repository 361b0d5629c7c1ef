import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chown, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

/** Debian's PostgreSQL 15 server binaries (postgresql-15). */
export const PG15_BIN = '/usr/lib/postgresql/15/bin';
/** How long a server may take to start, a base backup or a promotion to finish. */
const SERVER_LIMIT_MS = 60_000;
/** How long a connection attempt of the test's own may take. */
const CONNECT_LIMIT_MS = 2_000;

/** The account the servers run as: PostgreSQL refuses root, so as root the postgres one. */
interface Account {
  uid: number;
  gid: number;
  home: string;
}

function serverAccount(): Account | undefined {
  if (userInfo().uid !== 0) return undefined;
  const entry = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .map((line) => line.split(':'))
    .find(([name]) => name === 'postgres');
  if (!entry) throw new Error('as root, the servers run as the postgres account: there is none');
  return { uid: Number(entry[2]), gid: Number(entry[3]), home: entry[5] };
}

/**
 * A directory of temporary PostgreSQL 15 servers (each a data directory and a process of
 * the test's own, on a loopback port), owned by the account they run as; `remove()` kills
 * every server still running and deletes it all.
 */
export class PostgresServers {
  private readonly servers = new Set<PostgresServer>();

  private constructor(
    readonly dir: string,
    private readonly account: Account | undefined,
  ) {}

  static async create(): Promise<PostgresServers> {
    if (!existsSync(join(PG15_BIN, 'postgres'))) {
      throw new Error(
        `PostgreSQL 15 is not installed (${PG15_BIN}): apt-get install postgresql-15`,
      );
    }
    const account = serverAccount();
    const dir = await mkdtemp(join(tmpdir(), 'plant-store-pg15-'));
    if (account) await chown(dir, account.uid, account.gid);
    return new PostgresServers(dir, account);
  }

  /** A new cluster (initdb, trusting loopback), started as a primary with `settings`. */
  async primary(
    name: string,
    port: number,
    settings: Record<string, string>,
  ): Promise<PostgresServer> {
    const dataDir = join(this.dir, name);
    await this.run('initdb', [
      '--pgdata',
      dataDir,
      '--username',
      'postgres',
      '--auth',
      'trust',
      '--encoding',
      'UTF8',
      '--locale',
      'C',
      '--no-sync',
    ]);
    return this.start(dataDir, port, settings);
  }

  /**
   * A standby of `source`: its base backup (pg_basebackup -R, so it follows `source` by
   * streaming replication), started with `settings`. Resolves once it accepts connections.
   */
  async standbyOf(
    source: PostgresServer,
    name: string,
    port: number,
    settings: Record<string, string>,
  ): Promise<PostgresServer> {
    const dataDir = join(this.dir, name);
    await rm(dataDir, { recursive: true, force: true });
    await this.run('pg_basebackup', [
      '--dbname',
      `host=127.0.0.1 port=${source.port} user=postgres application_name=${name}`,
      '--pgdata',
      dataDir,
      '--write-recovery-conf',
      '--wal-method',
      'stream',
      '--checkpoint',
      'fast',
      '--no-sync',
    ]);
    return this.start(dataDir, port, { cluster_name: name, ...settings });
  }

  /** Kills every server still running, and removes their shared memory and directories. */
  async remove(): Promise<void> {
    await Promise.all([...this.servers].map((server) => server.remove()));
    await rm(this.dir, { recursive: true, force: true });
  }

  /** A server tool as the servers' account, bounded by SERVER_LIMIT_MS. */
  run(tool: string, args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(
        join(PG15_BIN, tool),
        args,
        { ...this.spawnOptions(), timeout: SERVER_LIMIT_MS, killSignal: 'SIGKILL' },
        (error, stdout, stderr) =>
          error
            ? reject(new Error(`${tool} failed: ${error.message}\n${stderr}`))
            : resolve(stdout),
      );
    });
  }

  private spawnOptions() {
    const { account } = this;
    return {
      cwd: this.dir,
      env: { PATH: process.env.PATH ?? '', HOME: account?.home ?? this.dir, LC_ALL: 'C' },
      ...(account ? { uid: account.uid, gid: account.gid } : {}),
    };
  }

  private async start(
    dataDir: string,
    port: number,
    settings: Record<string, string>,
  ): Promise<PostgresServer> {
    // Beside the data directory: a base backup of it would carry the directory along.
    const sockets = `${dataDir}.sockets`;
    await mkdir(sockets, { recursive: true });
    if (this.account) await chown(sockets, this.account.uid, this.account.gid);
    const all = {
      listen_addresses: '127.0.0.1',
      port: String(port),
      unix_socket_directories: sockets,
      shared_buffers: '32MB',
      ...settings,
    };
    // In a process group of its own, so that kill() ends the postmaster and its backends
    // at once, as a machine that dies does.
    const child = spawn(
      join(PG15_BIN, 'postgres'),
      ['-D', dataDir, ...Object.entries(all).flatMap(([key, value]) => ['-c', `${key}=${value}`])],
      { ...this.spawnOptions(), detached: true, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const server = new PostgresServer(this, child, dataDir, port);
    this.servers.add(server);
    await server.accepting();
    return server;
  }
}

/** A PostgreSQL 15 server of PostgresServers. */
export class PostgresServer {
  readonly exited: Promise<void>;
  /** Its shared memory segment's id, read once it accepts connections. */
  private segment: Promise<string | undefined> = Promise.resolve(undefined);
  private log = '';

  constructor(
    private readonly servers: PostgresServers,
    private readonly child: ChildProcess,
    readonly dataDir: string,
    readonly port: number,
  ) {
    child.stderr!.on(
      'data',
      (chunk: Buffer) => (this.log = (this.log + chunk.toString()).slice(-20_000)),
    );
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
  }

  url(database: string): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** Runs SQL on one connection of its own, bounded by CONNECT_LIMIT_MS to connect. */
  async query<Row = Record<string, unknown>>(
    sql: string,
    values: unknown[] = [],
    database = 'postgres',
  ): Promise<Row[]> {
    const client = new pg.Client({
      connectionString: this.url(database),
      connectionTimeoutMillis: CONNECT_LIMIT_MS,
      query_timeout: SERVER_LIMIT_MS,
    });
    client.on('error', () => undefined);
    await client.connect();
    try {
      return (await client.query(sql, values)).rows as Row[];
    } finally {
      await client.end();
    }
  }

  /** Resolves once it accepts connections (a standby once it is consistent). */
  async accepting(): Promise<void> {
    const deadline = Date.now() + SERVER_LIMIT_MS;
    let exited = false;
    void this.exited.then(() => (exited = true));
    for (;;) {
      try {
        await this.query('SELECT 1');
        this.segment = this.sharedMemorySegment();
        return;
      } catch (error) {
        if (exited || Date.now() > deadline) {
          await this.kill();
          throw new Error(
            `PostgreSQL on port ${this.port} did not start: ${String(error)}\n${this.log}`,
          );
        }
      }
      await sleep(100);
    }
  }

  /** pg_ctl promote, waiting until it takes writes. */
  async promote(): Promise<void> {
    await this.servers.run('pg_ctl', [
      'promote',
      '--pgdata',
      this.dataDir,
      '--wait',
      '--timeout',
      String(SERVER_LIMIT_MS / 1_000),
    ]);
  }

  /** kill -9 of the postmaster and every backend at once, as a machine that dies leaves it. */
  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      process.kill(-this.child.pid!, 'SIGKILL');
    }
    await this.exited;
  }

  /**
   * Kills it, and removes its System V shared memory segment, which a server killed so
   * leaves behind and only a restart in the same directory would reclaim.
   */
  async remove(): Promise<void> {
    await this.kill();
    const segment = await this.segment;
    if (segment !== undefined) {
      await new Promise((resolve) => execFile('ipcrm', ['-m', segment], () => resolve(undefined)));
    }
  }

  /** postmaster.pid's seventh line: the segment's key and id. */
  private async sharedMemorySegment(): Promise<string | undefined> {
    const pidFile = await readFile(join(this.dataDir, 'postmaster.pid'), 'utf8').catch(() => '');
    return /^\s*\d+\s+(\d+)\s*$/.exec(pidFile.split('\n')[6] ?? '')?.[1];
  }
}
