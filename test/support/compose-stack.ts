import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type CliResult, freePort } from './built-service.js';
import { loginEnvironment } from './login-environment.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The db service's account and database (docker-compose.yml). */
const DATABASE = 'plant_store';
const COMMAND_LIMIT_MS = 5 * 60_000;
/** /sys/class/net/IF/addr_assign_type of an address set by hand, which Linux keeps. */
const NET_ADDR_SET = '3';

/** What the engine says of one container of the stack. */
export interface ContainerState {
  id: string;
  name: string;
  /** The compose service it runs. */
  service: string;
  /** `running`, `exited`, … */
  status: string;
  /** `healthy`, `starting`, `unhealthy`, or null without a health check. */
  health: string | null;
  exitCode: number;
  /** Its main process on this machine, 0 when it is not running. */
  pid: number;
  /** Its address on the project's network ('' when it is not running). */
  address: string;
}

/**
 * `docker compose` where the Docker CLI has it, else the stand-alone `docker-compose`:
 * the command a user of this machine has.
 */
async function composeCommand(): Promise<string[]> {
  const { code } = await run(['docker', 'compose', 'version'], {});
  return code === 0 ? ['docker', 'compose'] : ['docker-compose'];
}

function run(
  [file, ...args]: string[],
  env: Record<string, string>,
  input?: string,
): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(
      file,
      args,
      { cwd: ROOT, env, timeout: COMMAND_LIMIT_MS, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({
          code: error ? (typeof error.code === 'number' ? error.code : 1) : 0,
          stdout,
          stderr,
        }),
    );
    child.stdin?.end(input);
  });
}

/**
 * The project's own docker-compose.yml, unchanged, under a project name, a host port and
 * an image tag of its own (COMPOSE_PROJECT_NAME, PLANT_STORE_PORT, PLANT_STORE_TAG), so
 * that it neither meets nor removes what a user runs on the machine.
 */
export class ComposeStack {
  readonly baseUrl: string;

  private constructor(
    private readonly command: string[],
    readonly project: string,
    readonly port: number,
    readonly tag: string,
    private readonly env: Record<string, string>,
  ) {
    this.baseUrl = `http://127.0.0.1:${port}`;
  }

  /** `settings`: more variables the compose file reads (WEBHOOK_ALLOWED_HOSTS, …). */
  static async create(settings: Record<string, string> = {}): Promise<ComposeStack> {
    const suffix = randomBytes(3).toString('hex');
    const project = `plant-store-test-${suffix}`;
    const port = await freePort();
    const tag = `test-${suffix}`;
    const env = {
      ...loginEnvironment(),
      ...(process.env.DOCKER_HOST && { DOCKER_HOST: process.env.DOCKER_HOST }),
      COMPOSE_PROJECT_NAME: project,
      PLANT_STORE_PORT: String(port),
      PLANT_STORE_TAG: tag,
      ...settings,
    };
    return new ComposeStack(await composeCommand(), project, port, tag, env);
  }

  /** A variable the compose file reads, for every command from now on. */
  set(name: string, value: string): void {
    this.env[name] = value;
  }

  /** The images this stack builds. */
  get images(): string[] {
    return [
      `plant-store:${this.tag}`,
      `plant-store-pgbouncer:${this.tag}`,
      // What deploy/compose/rollout.sh rolls to (as a test builds it), and what it replaced.
      `plant-store:${this.tag}-next`,
      `plant-store:${this.tag}-previous`,
    ];
  }

  /** `docker compose ARGS`; throws with its output when it fails. */
  async compose(args: string[], input?: string): Promise<string> {
    return this.succeed([...this.command, ...args], input);
  }

  /** `docker ARGS`, on the same engine. */
  async docker(args: string[]): Promise<string> {
    return this.succeed(['docker', ...args]);
  }

  /** `docker ARGS`, started and left running (for a command that watches). */
  spawnDocker(args: string[]): ChildProcess {
    return spawn('docker', args, { cwd: ROOT, env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
  }

  /**
   * Bash lines as a user types them into a terminal in the project's folder. Where the
   * Docker CLI has no `compose`, `docker compose` runs `docker-compose`, as an alias would.
   */
  async shell(script: string): Promise<CliResult> {
    const alias =
      this.command[0] === 'docker-compose'
        ? 'docker() { if [ "$1" = compose ]; then shift; command docker-compose "$@"; else command docker "$@"; fi; }\n'
        : '';
    return run(['bash', '-euo', 'pipefail', '-c', alias + script], this.env);
  }

  /** Every container of the project (or of one service), as the engine sees it now. */
  async containers(service?: string): Promise<ContainerState[]> {
    const ids = (await this.compose(['ps', '-q', ...(service ? [service] : [])]))
      .split('\n')
      .filter(Boolean);
    if (ids.length === 0) return [];
    const inspected = JSON.parse(await this.docker(['inspect', ...ids])) as {
      Id: string;
      Name: string;
      Config: { Labels: Record<string, string> };
      State: {
        Status: string;
        ExitCode: number;
        Pid: number;
        Health?: { Status: string } | null;
      };
      NetworkSettings: { Networks: Record<string, { IPAddress: string }> };
    }[];
    return inspected.map(({ Id, Name, Config, State, NetworkSettings }) => ({
      id: Id,
      name: Name.replace(/^\//, ''),
      service: Config.Labels['com.docker.compose.service'],
      status: State.Status,
      health: State.Health?.Status || null,
      exitCode: State.ExitCode,
      pid: State.Pid,
      address: Object.values(NetworkSettings.Networks)[0]?.IPAddress ?? '',
    }));
  }

  /** What the project still owns on the engine: containers, networks and volumes. */
  async leftovers(): Promise<string[]> {
    const label = `label=com.docker.compose.project=${this.project}`;
    const listed = await Promise.all([
      this.docker(['ps', '-a', '-q', '--filter', label]),
      this.docker(['network', 'ls', '-q', '--filter', label]),
      this.docker(['volume', 'ls', '-q', '--filter', label]),
    ]);
    return listed.flatMap((output) => output.split('\n').filter(Boolean));
  }

  /**
   * One SQL query in the db service's psql, as its superuser (ALTER SYSTEM, say), its rows
   * as lines of `|`-separated values.
   */
  async query(sql: string): Promise<string[]> {
    const output = await this.compose(
      [
        'exec',
        '-T',
        'db',
        'psql',
        '-U',
        'postgres',
        '-d',
        DATABASE,
        '-v',
        'ON_ERROR_STOP=1',
        '-tA',
      ],
      sql,
    );
    return output.split('\n').filter(Boolean);
  }

  /**
   * Gives the project network's bridge an address of its own, as Docker does, on an engine
   * that leaves it to Linux (podman 4.3's netavark, before 1.6). There the bridge takes the
   * lowest address among its ports, so a container that joins or leaves (the migrate
   * service, `compose run --rm`) can change the gateway's address under the others; the
   * address they cached goes dead, and with it their DNS, for up to a minute, and a new
   * connection to PgBouncer times out. Then the containers learn the pinned address anew.
   * Does nothing where the bridge is not on this machine or already has its own address.
   */
  async pinBridgeAddress(): Promise<void> {
    const [network] = JSON.parse(
      await this.docker(['network', 'inspect', `${this.project}_default`]),
    ) as { IPAM: { Config: { Gateway?: string }[] } }[];
    const gateway = network.IPAM.Config[0]?.Gateway;
    const interfaces = JSON.parse(
      (await run(['ip', '-j', '-4', 'addr', 'show'], this.env)).stdout || '[]',
    ) as { ifname: string; addr_info: { local: string }[] }[];
    const bridge = interfaces.find(({ addr_info }) =>
      addr_info.some(({ local }) => local === gateway),
    )?.ifname;
    if (!bridge) return;
    const link = (file: string) => readFileSync(`/sys/class/net/${bridge}/${file}`, 'utf8').trim();
    if (link('addr_assign_type') === NET_ADDR_SET) return;
    await this.succeed(['ip', 'link', 'set', 'dev', bridge, 'address', link('address')]);
    for (const { pid } of await this.containers())
      if (pid !== 0)
        await this.succeed(['nsenter', '-t', String(pid), '-n', 'ip', 'neigh', 'flush', 'all']);
  }

  /** Removes every container, network, volume and image of the project. */
  async destroy(): Promise<void> {
    // With the profile, so that its service goes too when a step that started it failed.
    await run(
      [
        ...this.command,
        '--profile',
        'monitoring',
        'down',
        '-v',
        '--remove-orphans',
        '--timeout',
        '1',
      ],
      this.env,
    );
    await run(['docker', 'image', 'rm', '--force', ...this.images], this.env);
  }

  private async succeed(command: string[], input?: string): Promise<string> {
    const { code, stdout, stderr } = await run(command, this.env, input);
    if (code !== 0) throw new Error(`${command.join(' ')} exited ${code}:\n${stderr}${stdout}`);
    return stdout;
  }
}
