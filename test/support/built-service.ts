import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { type Agent, request as httpRequest } from 'node:http';
import { createConnection, createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { isStale, SERVICE_BUILD } from '../../scripts/build-if-stale.mjs';
import { withTestSecretKeys } from './webhook-secret-keys.js';
import { loginEnvironment } from './login-environment.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ENTRY = join(ROOT, SERVICE_BUILD.output);
export const OPENAPI_CLI = join(ROOT, scriptEntry(ROOT, 'openapi'));
/** What `npm run backup` and `npm run restore` run. */
export const BACKUP_CLI = join(ROOT, scriptEntry(ROOT, 'backup'));

/** What is built before the tests, each from its sources, by an npm command. */
const BUILDS = [
  SERVICE_BUILD,
  {
    // The typed client, which the tests import from its workspace package as a consumer does.
    output: 'packages/client/dist/index.js',
    sources: ['packages/client/src', 'packages/client/tsconfig.json', 'package-lock.json'],
    npmArgs: ['run', '--silent', 'build', '--workspace=@plant-store/client'],
  },
];
const STARTUP_LIMIT_MS = 60_000;
/** util-linux `script`, which runs a command on a pseudo-terminal; null where it is missing. */
export const TERMINAL = ['/usr/bin/script', '/bin/script'].find(existsSync) ?? null;

/** Builds the service and the client, each unless its output is newer than its sources. */
export async function buildIfStale(): Promise<void> {
  for (const build of BUILDS) {
    if (isStale(build)) await promisify(execFile)('npm', build.npmArgs, { cwd: ROOT });
  }
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServiceOptions {
  /**
   * Runs the service in a process group of its own, as a supervisor would, so that
   * `killProcessGroup()` can end it and every process it started in its group at once.
   */
  ownProcessGroup?: boolean;
  /**
   * Stops keeping stdout once the service listens: a long run logs a line per request.
   * `'request lines'`: forgets only those, and keeps the others (warnings, say).
   */
  forgetOutput?: boolean | 'request lines';
  /** Runs it with the Node.js flags of `npm run start:prod`, as the image does. */
  productionFlags?: boolean;
  /** Node.js flags before the entry point (after the production ones), e.g. an `--import`. */
  nodeFlags?: string[];
  /**
   * Runs `npm <npmArgs>` instead (e.g. `['start']`), as a user types it; the process
   * signalled and awaited is then npm's.
   */
  npmArgs?: string[];
  /** Runs the build in this directory (a previous release's, say), in it, not this tree's. */
  buildDir?: string;
}

/** The npm scripts of the tree in `dir`, as its package.json declares them. */
function npmScripts(dir: string): Record<string, string> {
  const packageJson = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  return packageJson.scripts;
}

/** The flags in `npm run start:prod`, which is `exec node <flags> dist/src/main.js`. */
function productionFlags(): string[] {
  return npmScripts(ROOT)['start:prod'].split(' ').slice(2, -1);
}

/**
 * The built file that `npm run <script>` runs in the tree `buildDir`, as its own
 * package.json names it: a previous release keeps its entry points where it had them.
 */
function scriptEntry(buildDir: string, script: string): string {
  const entry = npmScripts(buildDir)
    [script]?.split(' ')
    .find((word) => word.endsWith('.js'));
  if (entry === undefined) throw new Error(`${buildDir}: npm run ${script} runs no .js file`);
  return entry;
}

/** `node dist/src/main.js` as an operator runs it. */
export class ServiceProcess {
  private stdout = '';
  /** With forgetOutput 'request lines': the start of a line whose end has not come yet. */
  private partialLine = '';
  private stderr = '';
  private listens = false;
  /** The port it was told to listen on; 0: one the system picks. */
  private readonly chosenPort: number;
  readonly exited: Promise<Exit>;
  private readonly child: ChildProcess;

  constructor(
    env: Record<string, string>,
    private readonly options: ServiceOptions = {},
  ) {
    this.chosenPort = Number(env.PORT ?? 0);
    const flags = [
      ...(options.productionFlags ? productionFlags() : []),
      ...(options.nodeFlags ?? []),
    ];
    const [command, args] = options.npmArgs
      ? ['npm', options.npmArgs]
      : [process.execPath, [...flags, join(options.buildDir ?? ROOT, SERVICE_BUILD.output)]];
    this.child = spawn(command, args, {
      cwd: options.buildDir ?? ROOT,
      env: { ...loginEnvironment(), HOST: '127.0.0.1', PORT: '0', ...withTestSecretKeys(env) },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: options.ownProcessGroup === true,
    });
    this.child.stdout!.on('data', (chunk: Buffer) => {
      if (!(options.forgetOutput && this.listens)) {
        this.stdout += chunk.toString();
        return;
      }
      if (options.forgetOutput === true) return;
      const lines = (this.partialLine + chunk.toString()).split('\n');
      this.partialLine = lines.pop()!;
      for (const line of lines) {
        if (!line.includes('"msg":"request completed"')) this.stdout += `${line}\n`;
      }
    });
    this.child.stderr!.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    // `close`, not `exit`: it comes once the pipes are read too, so the last lines are in.
    this.exited = new Promise((resolve) =>
      this.child.once('close', (code, signal) => resolve({ code, signal })),
    );
  }

  get pid(): number {
    return this.child.pid!;
  }

  get output(): { stdout: string; stderr: string } {
    return { stdout: this.stdout, stderr: this.stderr };
  }

  /** The JSON log lines written to stdout so far (not npm's banner, under `npmArgs`). */
  logLines(): Array<Record<string, unknown>> {
    return this.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  /** Resolves with the service's base URL once it listens; rejects if it exits first. */
  async listening(): Promise<string> {
    const deadline = Date.now() + STARTUP_LIMIT_MS;
    let exited = false;
    void this.exited.then(() => (exited = true));
    for (;;) {
      const url = await this.listeningUrl();
      if (url) {
        this.listens = true;
        return url;
      }
      if (exited || Date.now() > deadline) {
        const how = exited ? `it exited: ${JSON.stringify(await this.exited)}` : 'in time';
        throw new Error(`the service did not start (${how}):\n${this.stdout}\n${this.stderr}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /**
   * Its base URL if it listens: from its log line, or, on a port chosen for it, once that
   * port accepts connections (above LOG_LEVEL info there is no such line).
   */
  private async listeningUrl(): Promise<string | undefined> {
    const match = / listening on (http:\/\/[^"]+)"/.exec(this.stdout);
    if (match) return match[1].replace(/localhost|0\.0\.0\.0|\[::\]/, '127.0.0.1');
    if (this.chosenPort !== 0 && (await acceptsConnections(this.chosenPort)))
      return `http://127.0.0.1:${this.chosenPort}`;
    return undefined;
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /**
   * kill -9 (or `signal`, as a terminal's Ctrl-C sends SIGINT) of the service's whole
   * process group (it must have been started in its own).
   */
  killProcessGroup(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (!this.options.ownProcessGroup)
      throw new Error('the service has no process group of its own');
    process.kill(-this.child.pid!, signal);
  }

  /** Ends the service if it is still running (SIGKILL), for test clean-up. */
  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }
}

/**
 * `node dist/src/main.js` on a pseudo-terminal (TERMINAL), as a developer runs it in one.
 * Its stdout is what the terminal shows.
 */
export function spawnInTerminal(env: Record<string, string>): ChildProcess {
  return spawn(TERMINAL!, ['-qec', `exec "${process.execPath}" "${ENTRY}"`, '/dev/null'], {
    cwd: ROOT,
    env: { ...loginEnvironment(), HOST: '127.0.0.1', PORT: '0', ...withTestSecretKeys(env) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

export async function startService(
  env: Record<string, string>,
  options?: ServiceOptions,
): Promise<{ service: ServiceProcess; url: string }> {
  const service = new ServiceProcess(env, options);
  try {
    return { service, url: await service.listening() };
  } catch (error) {
    await service.stop();
    throw error;
  }
}

export interface ServiceOnTestDatabase {
  database: TestDatabase;
  service: ServiceProcess;
  url: string;
  /** A token with both scopes, issued through the token CLI. */
  token: string;
  /** Ends the service and drops its database. */
  stop(): Promise<void>;
}

/** The built service on a fresh database of its own, with a token to call it. */
export async function startServiceOnTestDatabase(
  env: Record<string, string> = {},
  options?: ServiceOptions,
): Promise<ServiceOnTestDatabase> {
  const database = await createTestDatabase();
  const { service, url } = await startService({ ...database.env, ...env }, options);
  const stop = async () => {
    await service.stop();
    await database.drop();
  };
  try {
    return { database, service, url, token: await issueToken(database), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * One request, on a connection of its own unless `agent` (e.g. a keep-alive one) is
 * given. `onWritten` is told when all its bytes are handed to the socket.
 */
export function send(
  url: string,
  options: {
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    agent?: Agent;
    onWritten?: () => void;
  } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      { method: options.method ?? 'GET', headers: options.headers, agent: options.agent ?? false },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode!, headers: response.headers, body }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    if (options.onWritten) request.on('finish', options.onWritten);
    request.end(options.body);
  });
}

/** A create on a connection of its own: when its bytes are written, and how it ends. */
export function createOnNewConnection(
  url: string,
  token: string,
  id: number,
): { sent: Promise<void>; answer: Promise<Answer | Error> } {
  let written!: () => void;
  const sent = new Promise<void>((resolve) => (written = resolve));
  const answer: Promise<Answer | Error> = send(`${url}/plants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ id, name: `plant ${id}` }),
    onWritten: written,
  }).catch((error: Error) => error);
  return { sent, answer };
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `npm run --silent token -- …` as an operator runs it (the built CLI, no npm around it),
 * of this tree or of the build in `buildDir`.
 */
export function runTokenCli(
  args: string[],
  env: Record<string, string>,
  buildDir = ROOT,
): Promise<CliResult> {
  return runCli(buildDir, scriptEntry(buildDir, 'token'), args, env);
}

/**
 * `npm run migration:run` (`args`: `['run']`) or `migration:revert`, as a job runs it, of
 * this tree or of the build in `buildDir`.
 */
export function runMigrationCli(
  args: string[],
  env: Record<string, string>,
  buildDir = ROOT,
): Promise<CliResult> {
  return runCli(buildDir, scriptEntry(buildDir, 'migration:run'), args, env);
}

/** `npm run backup -- FILE` or `npm run restore -- FILE …` (`command`), as an operator runs it. */
export function runBackupCli(
  command: 'backup' | 'restore',
  args: string[],
  env: Record<string, string>,
): Promise<CliResult> {
  return runCli(ROOT, scriptEntry(ROOT, command), [command, ...args], env);
}

/**
 * `npm run backup` or `restore` on a pseudo-terminal (TERMINAL), as an operator runs it in
 * one: `output` is what the terminal shows (stdout and stderr).
 */
export function runBackupCliInTerminal(
  command: 'backup' | 'restore',
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; output: string }> {
  const line = [process.execPath, join(ROOT, scriptEntry(ROOT, command)), command, ...args]
    .map((word) => `'${word}'`)
    .join(' ');
  return new Promise((resolve) => {
    execFile(
      TERMINAL!,
      ['-qec', line, '/dev/null'],
      { cwd: ROOT, env: { ...loginEnvironment(), ...withTestSecretKeys(env) } },
      (error, stdout) => resolve({ code: error ? Number(error.code ?? 1) : 0, output: stdout }),
    );
  });
}

/** `npm run --silent webhook-secrets -- …`, as an operator runs it. */
export function runWebhookSecretsCli(
  args: string[],
  env: Record<string, string>,
): Promise<CliResult> {
  return runCli(ROOT, scriptEntry(ROOT, 'webhook-secrets'), args, env);
}

/** `npm run --silent audit -- …`, as an operator runs it. */
export function runAuditCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  return runCli(ROOT, scriptEntry(ROOT, 'audit'), args, env);
}

function runCli(
  buildDir: string,
  entry: string,
  args: string[],
  env: Record<string, string>,
): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(buildDir, entry), ...args],
      { cwd: buildDir, env: { ...loginEnvironment(), ...withTestSecretKeys(env) } },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/**
 * Issues a token for a database the service uses, through the token CLI: a test database
 * with both its roles (the CLI may be the first to migrate it), or a URL.
 */
export async function issueToken(
  database: string | TestDatabase,
  name = 'ops-test',
): Promise<string> {
  const { code, stdout, stderr } = await runTokenCli(
    ['create', '--name', name],
    typeof database === 'string' ? { DATABASE_URL: database } : database.env,
  );
  if (code !== 0) throw new Error(`token create failed: ${stderr}`);
  return stdout.trim();
}

/** A TCP port free on 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Whether something accepts TCP connections on this loopback port now. */
export function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => socket.end(() => resolve(true)));
    socket.once('error', () => resolve(false));
  });
}
