import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { APP_SCHEMA } from '../../src/app.schema.js';

const MIGRATIONS = APP_SCHEMA.migrations;
import { type Answer, freePort, runBackupCli, send } from '../support/built-service.js';
import { Webhook } from 'standardwebhooks';
import { ComposeStack, type ContainerState } from '../support/compose-stack.js';

const REPLICAS = 3;
/** docker-compose.yml's RATE_LIMIT_PER_MINUTE. */
const RATE_LIMIT_PER_MINUTE = 600;
/** How soon a revocation reaches every replica (docs/operations/security.md). */
const REVOCATION_LIMIT_MS = 1_000;
/** The steady load's pace, under the rate limit for the minute a step lasts. */
const LOAD_PER_SECOND = 40;
/** The steady load during a rollout, which lasts more than a minute: over several tokens. */
const ROLLOUT_LOAD_PER_SECOND = 20;
const ROLLOUT_TOKENS = 3;
/** The image's growth over its base, kept small: production dependencies only. */
const IMAGE_GROWTH_LIMIT_MB = 60;
const READY_LIMIT = { timeout: 120_000, interval: 500 };
/**
 * A request's bound while PgBouncer or PostgreSQL hangs: DATABASE_CONNECT_TIMEOUT_MS (3 s)
 * for a connection, DATABASE_STATEMENT_TIMEOUT_MS (5 s) and the client's 1 s beyond it
 * for the statement (docs/operations/configuration.md), plus a second for the machine.
 */
const FROZEN_REQUEST_LIMIT_MS = 10_000;
/** How long a dependency stays frozen: longer than a request's bound. */
const FROZEN_MS = 11_000;
/**
 * A request's bound while Redis hangs: REDIS_COMMAND_TIMEOUT_MS (100 ms) once, then the
 * in-memory count; the rest is the machine's own latency under the compose stack.
 */
const REDIS_FROZEN_REQUEST_LIMIT_MS = 1_000;
/** Slower than LOAD_PER_SECOND: a frozen dependency's step lasts longer, with one token. */
const FROZEN_LOAD_PER_SECOND = 20;
const README_PLANT_ID = '9223372036854775807';
/** deploy/monitoring/prometheus.yml's scrape and evaluation intervals. */
const PROMETHEUS_INTERVAL_MS = 5_000;
/**
 * The webhook worker's claim, a write every WEBHOOK_POLL_INTERVAL_MS (1 s), turns
 * db_accepts_writes within it; and a margin for the machine.
 */
const WRITES_GAUGE_MS = 1_000 + 3_000;
/** Creates sent straight to a replica as it is signalled, as a black-box stop check does. */
const IN_FLIGHT_CREATES = 50;

const packageVersion = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string })
  .version;

/** The installed paths (`node_modules/…`) that only the dev dependencies need. */
const devOnlyPackages = Object.entries(
  (
    JSON.parse(readFileSync('package-lock.json', 'utf8')) as {
      packages: Record<string, { dev?: boolean }>;
    }
  ).packages,
)
  .filter(([path, { dev }]) => dev && path.startsWith('node_modules/'))
  .map(([path]) => path);

/**
 * The README's container section: its shell lines, comments dropped, and its text. The
 * test runs these lines as written, so the README holds the commands as tested.
 */
const readmeContainers = (() => {
  const readme = readFileSync('README.md', 'utf8');
  const section = /^## Containers\n([\s\S]*?)^## /m.exec(readme)![1];
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map(([, block]) => block);
  return { section, blocks };
})();

/** `command`, once the README's container section has it as a line of its own. */
function readmeLine(command: string): string {
  const lines = readmeContainers.blocks.flatMap((block) =>
    block.split('\n').map((line) => line.replace(/\s+#.*$/, '')),
  );
  if (!lines.includes(command))
    throw new Error(`the README's container section has no line "${command}"`);
  return command;
}

/**
 * docs/operations/database.md's compose backup and restore, as written: its line with `pg_dump`,
 * and the lines after it (a continued line joined), the archive written to `file`.
 */
const serverBackupDrill = (file: string) => {
  const docs = readFileSync('docs/operations/database.md', 'utf8');
  const section = /^### Server deployments: `pg_dump` and `pg_restore`\n([\s\S]*?)^##/m.exec(
    docs,
  )![1];
  const lines = /```sh\n([\s\S]*?)```/
    .exec(section)![1]
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => line.replaceAll('plant-store.dump', file));
  const backup = lines.findIndex((line) => line.includes('pg_dump'));
  return { backup: lines[backup], restore: lines.slice(backup + 1) };
};

/** The stack's WEBHOOK_SECRET_KEYS: docker-compose.yml's default, which the test does not override. */
const stackSecretKeys = () =>
  /WEBHOOK_SECRET_KEYS: &webhook-secret-keys \$\{WEBHOOK_SECRET_KEYS:-([^}]+)\}/.exec(
    readFileSync('docker-compose.yml', 'utf8'),
  )![1];

/** docs/operations/database.md's line that restores a backup into the stack from standard input. */
const stackRestoreLine = (file: string) => {
  const docs = readFileSync('docs/operations/database.md', 'utf8');
  const line = /^\s*(docker compose run .* restore -- - < plant-store\.backup\.gz)$/m.exec(
    docs,
  )![1];
  return line.replace('plant-store.backup.gz', file);
};

/** The README's shell block that holds `text`. */
function readmeBlock(text: string): string {
  const block = readmeContainers.blocks.find((candidate) => candidate.includes(text));
  if (!block) throw new Error(`the README's container section has no block with "${text}"`);
  return block;
}

interface Sent {
  id: number;
  /** performance.now() when it was sent. */
  sentAt: number;
  /** How long its answer took. */
  durationMs: number;
  /** Its status, or the error that ended it. */
  outcome: string;
  body: string;
}

/** A webhook receiver for the api image's Node.js, printing each delivery as a JSON line. */
const RECEIVER = `require('node:http').createServer((request, response) => {
  let body = '';
  request.setEncoding('utf8');
  request.on('data', (chunk) => (body += chunk));
  request.on('end', () => {
    console.log(JSON.stringify({ headers: request.headers, body }));
    response.writeHead(200).end();
  });
}).listen(4000)`;

let stack: ComposeStack;
const receiverName = () => `${stack.project}-receiver`;

beforeAll(async () => {
  stack = await ComposeStack.create();
  // The README's way to let the api deliver to a receiver inside the compose network.
  stack.set('WEBHOOK_ALLOWED_HOSTS', receiverName());
});
afterEach(async ({ task }) => {
  // What the services said, for a failure that happened inside them.
  if (task.result?.state === 'fail')
    console.log(await stack.compose(['logs', '--no-color', '--tail', '100']).catch(String));
});
afterAll(async () => {
  await stack?.destroy();
});

/** `docker compose …` as the README's container section writes it, run in bash. */
async function runReadmeLine(command: string): Promise<string> {
  const { code, stdout, stderr } = await stack.shell(readmeLine(command));
  if (code !== 0) throw new Error(`${command} exited ${code}:\n${stderr}`);
  return stdout;
}

/**
 * `up`, again while compose stops at a dependency it sees unhealthy. Under podman, the
 * stand-in engine of machines without Docker, health checks run every 2 s whatever the
 * image says, so a replica slow to start on a busy machine, or one restarted after a
 * drain, reads unhealthy for a moment before it turns healthy by itself; compose v1
 * gives up on the first look. Docker honours the image's start period.
 */
async function upUntilHealthy(up: () => Promise<unknown>): Promise<void> {
  const deadline = Date.now() + READY_LIMIT.timeout;
  for (;;) {
    try {
      await up();
      await stack.pinBridgeAddress();
      return;
    } catch (error) {
      if (!String(error).includes('is unhealthy') || Date.now() > deadline) throw error;
      await sleep(2_000);
    }
  }
}

/**
 * Waits until every replica is healthy; if they are not in time, the failure says, for
 * each replica that is not, its state, its last health checks and its last log lines.
 */
async function expectEveryReplicaHealthy(): Promise<void> {
  const healths = async () => (await stack.containers('api')).map(({ health }) => health);
  try {
    await expect
      .poll(healths, READY_LIMIT)
      .toEqual(Array.from({ length: REPLICAS }, () => 'healthy'));
  } catch (error) {
    const unhealthy = (await stack.containers('api')).filter(({ health }) => health !== 'healthy');
    const reports = await Promise.all(
      unhealthy.map(async ({ id, name, status, health, exitCode }) => {
        const checks = await stack.docker(['inspect', '-f', '{{json .State.Health}}', id]);
        const logs = await stack.docker(['logs', '--tail', '20', id]);
        return `${name}: ${status}, ${health}, exit code ${exitCode}\n${checks}\n${logs}`;
      }),
    );
    throw new Error(`${(error as Error).message}\n${reports.join('\n')}`, { cause: error });
  }
}

/** Every replica stopped or killed by an earlier step running again, and all healthy. */
async function allReplicasHealthy(): Promise<void> {
  // Started and healthy before `up` looks at them: under podman a stopped replica keeps its
  // last health (unhealthy, from its drain) until a check runs again.
  for (const { id } of (await stack.containers('api')).filter(
    ({ status }) => status === 'exited',
  )) {
    await stack.docker(['start', id]);
  }
  await expectEveryReplicaHealthy();
  await upUntilHealthy(() => stack.compose(['up', '-d', '--scale', `api=${REPLICAS}`]));
  await expectEveryReplicaHealthy();
}

/** A token, issued through `docker compose run` with the token CLI. */
async function issueToken(name: string, scopes = 'plants:read,plants:write'): Promise<string> {
  const output = await stack.compose([
    'run',
    '--rm',
    'migrate',
    'node',
    'dist/src/cli/token.cli.js',
    'create',
    '--name',
    name,
    '--scopes',
    scopes,
    '--replace',
  ]);
  return output.trim();
}

/** `POST /plants` through the balancer; `body` defaults to plant `id`. */
function create(token: string, body: string | number) {
  return send(`${stack.baseUrl}/plants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: typeof body === 'number' ? JSON.stringify({ id: body, name: `plant ${body}` }) : body,
  });
}

/**
 * Creates from `firstId` on, LOAD_PER_SECOND through the balancer, while `action` runs;
 * with several tokens, each create takes the next.
 */
async function underSteadyLoad(
  token: string | string[],
  firstId: number,
  action: () => Promise<void>,
  perSecond = LOAD_PER_SECOND,
): Promise<Sent[]> {
  let done = false;
  const acting = action().finally(() => (done = true));
  const sending: Promise<Sent>[] = [];
  const tokens = [token].flat();
  for (let id = firstId; !done; id++) {
    const sentAt = performance.now();
    const answered = (outcome: string, body: string) => ({
      id,
      sentAt,
      durationMs: performance.now() - sentAt,
      outcome,
      body,
    });
    sending.push(
      create(tokens[id % tokens.length], id).then(
        ({ status, body }) => answered(String(status), body),
        (error: Error) => answered(error.message, ''),
      ),
    );
    await sleep(1_000 / perSecond);
  }
  await acting;
  return Promise.all(sending);
}

/** Every create answered 200 is stored, with its content. */
async function expectStored(sent: Pick<Sent, 'id' | 'outcome'>[]) {
  const acknowledged = sent.filter(({ outcome }) => outcome === '200');
  const rows = await stack.query(
    `SELECT id, name FROM plants WHERE id IN (${acknowledged.map(({ id }) => id).join(',')})`,
  );
  const stored = new Map(rows.map((row) => row.split('|')).map(([id, name]) => [Number(id), name]));
  expect(acknowledged.filter(({ id }) => stored.get(id) !== `plant ${id}`)).toEqual([]);
}

const byService = (containers: ContainerState[], service: string) =>
  containers.filter((container) => container.service === service);

describe('the compose stack, run as its users run it', () => {
  let readmeToken: string;

  it('1. builds an image that runs as a non-root user with no dev dependency', async () => {
    await stack.compose(['build']);
    const [image] = JSON.parse(await stack.docker(['image', 'inspect', stack.images[0]])) as {
      Size: number;
      Config: { User: string; Labels: Record<string, string> };
    }[];
    expect(image.Config.User).toBe('node');
    expect(image.Config.Labels).toMatchObject({
      'org.opencontainers.image.version': packageVersion,
      'org.opencontainers.image.revision': expect.stringMatching(/\S/),
    });
    const [base] = JSON.parse(
      await stack.docker(['image', 'inspect', 'node:24-bookworm-slim']),
    ) as {
      Size: number;
    }[];
    const growthMb = (image.Size - base.Size) / 1e6;
    console.log(
      `image ${stack.images[0]}: ${(image.Size / 1e6).toFixed(0)} MB, ` +
        `${growthMb.toFixed(1)} MB over node:24-bookworm-slim`,
    );
    expect(growthMb).toBeLessThan(IMAGE_GROWTH_LIMIT_MB);
    const present = await stack.docker([
      'run',
      '--rm',
      '--entrypoint',
      'node',
      stack.images[0],
      '-e',
      `const { existsSync } = require('node:fs');
       console.log(JSON.stringify(${JSON.stringify(devOnlyPackages)}.filter(existsSync)))`,
    ]);
    expect(JSON.parse(present)).toEqual([]);
  });

  it('2. comes up from nothing: healthy dependencies, the migrations once, a healthy api behind the balancer', async () => {
    const started = performance.now();
    await upUntilHealthy(() => runReadmeLine('docker compose up -d'));
    await expect
      .poll(async () => {
        const { status } = await send(`${stack.baseUrl}/health/ready`).catch(() => ({
          status: 0,
        }));
        return status;
      }, READY_LIMIT)
      .toBe(200);
    console.log(
      `up to ready through the balancer: ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    const containers = await stack.containers();
    // The api's health check is the image's HEALTHCHECK: the compose file gives it none.
    for (const service of ['db', 'pgbouncer', 'redis', 'api'])
      expect(byService(containers, service).map(({ health }) => health)).toEqual(['healthy']);
    expect(byService(containers, 'migrate')).toMatchObject([
      { status: 'exited', exitCode: 0, health: null },
    ]);
    expect(await stack.query('SELECT name FROM migrations ORDER BY name')).toEqual(
      MIGRATIONS.map(({ name }) => name).sort(),
    );
    expect(await stack.compose(['logs', '--no-color', 'migrate'])).toMatch(
      new RegExp(`applied ${MIGRATIONS.length} migration\\(s\\)`),
    );
    // The address it is bound to, every interface, not the one a browser would use.
    expect(await stack.compose(['logs', '--no-color', 'api'])).toMatch(
      / listening on http:\/\/0\.0\.0\.0:3000"/,
    );
  });

  it("3. serves the README's container section as written, twice: a token through docker compose run, then its create", async () => {
    const block = readmeBlock('token.cli.js create');
    const script = `${block.replaceAll('localhost:3000', `localhost:${stack.port}`)}
printf '\\nTOKEN=%s\\n' "$TOKEN"`;
    // Twice, as a user repeats it: the second token replaces the first.
    for (let run = 1; run <= 2; run++) {
      const { code, stdout, stderr } = await stack.shell(script);
      expect(code, stderr).toBe(0);
      expect(stdout).toMatch(/^HTTP\/1\.1 200 OK/);
      expect(stdout).toContain('{"name":"Monstera","tag":"tropical"}');
      readmeToken = /^TOKEN=(pst_\S+)$/m.exec(stdout)![1];
    }
    const read = await send(`${stack.baseUrl}/plants/${README_PLANT_ID}`, {
      headers: { authorization: `Bearer ${readmeToken}` },
    });
    expect(read.status).toBe(200);
    expect(read.body).toContain(`"id":${README_PLANT_ID}`);
  });

  describe(`4. scaled to ${REPLICAS} replicas`, () => {
    it('starts them, while a second up applies no migration', async () => {
      await upUntilHealthy(() => runReadmeLine(`docker compose up -d --scale api=${REPLICAS}`));
      await expect
        .poll(
          async () => byService(await stack.containers('api'), 'api').map(({ health }) => health),
          READY_LIMIT,
        )
        .toEqual(Array.from({ length: REPLICAS }, () => 'healthy'));
      expect(await stack.compose(['logs', '--no-color', 'migrate'])).toMatch(
        /applied 0 migration\(s\)/,
      );
    });

    it('spreads requests over every replica, as their logs show', async () => {
      const token = await issueToken('spread');
      // A replica the engine reports healthy joins HAProxy's rotation after the balancer's
      // next DNS resolution and two passing checks (deploy/haproxy/haproxy.cfg): seconds on
      // Docker, up to about ten on podman's DNS. Each round sends a burst and reads the logs.
      await expect
        .poll(
          async () => {
            const statuses = await Promise.all(
              Array.from({ length: 10 * REPLICAS }, () =>
                send(`${stack.baseUrl}/plants?limit=1`, {
                  headers: { authorization: `Bearer ${token}` },
                }).then(({ status }) => status),
              ),
            );
            expect(statuses.every((status) => status === 200)).toBe(true);
            const logs = await runReadmeLine('docker compose logs api');
            return new Set(
              stripVTControlCharacters(logs)
                .split('\n')
                .filter(
                  (line) => line.includes('"path":"/plants"') && line.includes('"method":"GET"'),
                )
                .map((line) => line.split('|', 1)[0].trim()),
            ).size;
          },
          { timeout: 30_000, interval: 1_000 },
        )
        .toBe(REPLICAS);
    });

    it(`allows a token ${RATE_LIMIT_PER_MINUTE} creates a minute across all replicas (Redis)`, async () => {
      const token = await issueToken('limited');
      const firstId = 1_000_000;
      const ids = Array.from({ length: REPLICAS * RATE_LIMIT_PER_MINUTE }, (_, i) => firstId + i);
      const statuses: number[] = [];
      for (let i = 0; i < ids.length; i += 50) {
        const batch = ids.slice(i, i + 50).map((id) => create(token, id));
        statuses.push(...(await Promise.all(batch)).map(({ status }) => status));
      }
      expect(statuses.filter((status) => status === 200)).toHaveLength(RATE_LIMIT_PER_MINUTE);
      expect(statuses.filter((status) => status !== 200 && status !== 429)).toEqual([]);
      expect(
        await stack.query(
          `SELECT count(*) FROM plants WHERE id >= ${firstId} AND id < ${firstId + ids.length}`,
        ),
      ).toEqual([String(RATE_LIMIT_PER_MINUTE)]);
    });

    it('refuses a token revoked through docker compose run on every replica within a second', async () => {
      const token = await issueToken('revoked', 'plants:read');
      const replicas = await stack.containers('api');
      // In each replica, a client that reads with the token (so the replica caches it) and
      // then every 100 ms, until it is refused.
      const watchers = replicas.map(({ id }) => {
        const child = stack.spawnDocker([
          'exec',
          '-e',
          `TOKEN=${token}`,
          id,
          'node',
          '--input-type=module',
          '-e',
          `const read = () => fetch('http://127.0.0.1:3000/plants?limit=1',
             { headers: { authorization: 'Bearer ' + process.env.TOKEN } }).then((r) => r.status);
           console.log('first', await read());
           for (let status = 200; status === 200; ) {
             await new Promise((resolve) => setTimeout(resolve, 100));
             status = await read();
             if (status !== 200) console.log('then', status, Date.now());
           }`,
        ]);
        let output = '';
        child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
        const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
        return { output: () => output, exited };
      });
      await expect
        .poll(() => watchers.map(({ output }) => output().split('\n')[0]), READY_LIMIT)
        .toEqual(watchers.map(() => 'first 200'));
      await stack.compose([
        'run',
        '--rm',
        'migrate',
        'node',
        'dist/src/cli/token.cli.js',
        'revoke',
        'revoked',
      ]);
      const revokedBy = Date.now();
      await Promise.all(watchers.map(({ exited }) => exited));
      for (const { output } of watchers) {
        const [, status, at] = /^then (\d+) (\d+)$/m.exec(output())!;
        expect(status).toBe('401');
        expect(Number(at) - revokedBy).toBeLessThan(REVOCATION_LIMIT_MS);
      }
    });
  });

  it('5. drains a stopped replica under a steady load of creates: every request answered 200', async () => {
    const token = await issueToken('drain');
    const [replica] = await stack.containers('api');
    let drainSeconds = 0;
    const sent = await underSteadyLoad(token, 2_000_000, async () => {
      await sleep(1_000);
      const stopping = performance.now();
      await stack.docker(['stop', replica.id]);
      drainSeconds = (performance.now() - stopping) / 1000;
      await sleep(1_000);
    });
    console.log(`a replica's stop (readiness delay and drain): ${drainSeconds.toFixed(1)} s`);
    expect(sent.filter(({ outcome }) => outcome !== '200')).toEqual([]);
    expect(sent.length).toBeGreaterThan(LOAD_PER_SECOND * 5);
    await expectStored(sent);
    const [stopped] = (await stack.containers('api')).filter(({ id }) => id === replica.id);
    expect(stopped).toMatchObject({ status: 'exited', exitCode: 0 });
  });

  it(`5. drains a replica on SIGTERM and one on SIGINT, each signalled with ${IN_FLIGHT_CREATES} creates in flight sent straight to it: every one answered 200, exit 0`, async () => {
    const token = await issueToken('in-flight');
    // The image runs node itself (exec form), so the signals reach the service as PID 1.
    const signals = ['SIGTERM', 'SIGINT'];
    const replicas = (await stack.containers('api'))
      .filter(({ status }) => status === 'running')
      .slice(0, signals.length);
    const exits = replicas.map(({ id }) => stack.docker(['wait', id]));
    // Frozen as a CPU quota or SIGSTOP freezes them, their kernel still takes the
    // connections and the requests, and the service answers none before it thaws, its
    // signal already pending. (docker stop sends SIGTERM too, but podman refuses to stop a
    // paused container; step 5 before this one stops a replica with docker stop.)
    for (const { id } of replicas) await stack.docker(['pause', id]);
    let answered = 0;
    const creates = replicas.flatMap(({ address }, replica) =>
      Array.from({ length: IN_FLIGHT_CREATES }, (_, index) => {
        const id = 2_100_000 + replica * IN_FLIGHT_CREATES + index;
        let written!: () => void;
        const sent = new Promise<void>((resolve) => (written = resolve));
        const answer: Promise<Answer | Error> = send(`http://${address}:3000/plants`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ id, name: `plant ${id}` }),
          onWritten: written,
        })
          .catch((error: Error) => error)
          .finally(() => answered++);
        return { id, sent, answer };
      }),
    );
    let answeredWhileFrozen = -1;
    try {
      await Promise.all(creates.map(({ sent }) => sent));
      for (const [index, { id }] of replicas.entries())
        await stack.docker(['kill', '--signal', signals[index], id]);
      answeredWhileFrozen = answered;
    } finally {
      for (const { id } of replicas) await stack.docker(['unpause', id]);
    }
    expect(answeredWhileFrozen).toBe(0);
    const answers = await Promise.all(creates.map(({ answer }) => answer));
    expect(
      answers.map((answer) => (answer instanceof Error ? answer.message : answer.status)),
    ).toEqual(creates.map(() => 200));
    expect((await Promise.all(exits)).map((code) => code.trim())).toEqual(signals.map(() => '0'));
    for (const [index, { id }] of replicas.entries())
      expect(await stack.docker(['logs', id])).toContain(
        `${signals[index]}: finishing the requests in flight`,
      );
    await expectStored(creates.map(({ id }) => ({ id, outcome: '200' })));
  });

  it('6. takes a killed replica out of rotation under load; every acknowledged create is stored', async () => {
    await allReplicasHealthy();
    const token = await issueToken('kill');
    const [replica] = await stack.containers('api');
    let killedAt = 0;
    const sent = await underSteadyLoad(token, 3_000_000, async () => {
      await sleep(1_000);
      await stack.docker(['kill', replica.id]);
      killedAt = performance.now();
      await sleep(6_000);
    });
    // HAProxy checks every second and takes a server out after two failed checks.
    const afterwards = sent.filter(({ sentAt }) => sentAt > killedAt + 3_000);
    expect(afterwards.length).toBeGreaterThan(LOAD_PER_SECOND * 2);
    expect(afterwards.filter(({ outcome }) => outcome !== '200')).toEqual([]);
    await expectStored(sent);
  });

  it('7. delivers a new plant, signed and with its exact id, to a receiver in a container of the stack', async () => {
    // The receiver, started first as a subscriber does (the API resolves its host when it
    // is subscribed).
    await stack.compose(['run', '-d', '--name', receiverName(), 'migrate', 'node', '-e', RECEIVER]);
    const hooksToken = await issueToken('hooks', 'webhooks:manage');
    const subscribed = await send(`${stack.baseUrl}/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${hooksToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `http://${receiverName()}:4000/plant/webhook` }),
    });
    expect(subscribed.status, subscribed.body).toBe(201);
    const { secret } = JSON.parse(subscribed.body) as { secret: string };
    const id = '9007199254740993';
    const created = await create(readmeToken, `{"id": ${id}, "name": "Pilea"}`);
    expect(created.status).toBe(200);
    const deliveries = async () =>
      (await stack.docker(['logs', receiverName()]))
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { headers: Record<string, string>; body: string });
    await expect
      .poll(async () => (await deliveries()).length, { timeout: 30_000, interval: 250 })
      .toBeGreaterThan(0);
    const [delivery] = await deliveries();
    expect(delivery.body).toBe(`{"id":${id},"name":"Pilea"}`);
    expect(() => new Webhook(secret).verify(delivery.body, delivery.headers)).not.toThrow();
    await stack.docker(['rm', '--force', receiverName()]);
  });

  // docker pause freezes a container's processes as SIGSTOP does: its connections stay
  // open and nothing answers.
  describe.each(['pgbouncer', 'db'])('8. with %s frozen under load', (service) => {
    it(`answers 503 in the error shape within the time-outs, fails readiness, and recovers by itself once it thaws`, async () => {
      const token = await issueToken(`frozen-${service}`);
      const [container] = await stack.containers(service);
      const readiness = () =>
        send(`${stack.baseUrl}/health/ready`).then(({ status, body }) => ({
          status,
          body: JSON.parse(body) as unknown,
        }));
      let recoveredAt = Number.POSITIVE_INFINITY;
      const sent = await underSteadyLoad(
        token,
        service === 'db' ? 5_000_000 : 4_000_000,
        async () => {
          await sleep(1_000);
          await stack.docker(['pause', container.id]);
          const pausedAt = performance.now();
          try {
            // Through the balancer: HAProxy's own 503 once no replica is ready.
            await expect
              .poll(readiness, { timeout: FROZEN_REQUEST_LIMIT_MS, interval: 250 })
              .toMatchObject({ status: 503, body: { error: 503 } });
            // Longer than a statement may wait, so that requests caught in it time out.
            await sleep(FROZEN_MS - (performance.now() - pausedAt));
          } finally {
            await stack.docker(['unpause', container.id]);
          }
          await expect.poll(async () => (await readiness()).status, READY_LIMIT).toBe(200);
          recoveredAt = performance.now();
          await sleep(2_000);
        },
        FROZEN_LOAD_PER_SECOND,
      );
      expect(sent.filter(({ durationMs }) => durationMs > FROZEN_REQUEST_LIMIT_MS)).toEqual([]);
      const failed = sent.filter(({ outcome }) => outcome !== '200');
      expect(failed.length).toBeGreaterThan(0);
      for (const { outcome, body } of failed) {
        expect(outcome).toBe('503');
        expect(JSON.parse(body)).toMatchObject({ error: 503, message: expect.any(String) });
      }
      const afterRecovery = sent.filter(({ sentAt }) => sentAt > recoveredAt);
      expect(afterRecovery.length).toBeGreaterThan(0);
      expect(afterRecovery.filter(({ outcome }) => outcome !== '200')).toEqual([]);
      await expectStored(sent);
    });
  });

  it('8. with redis frozen under load: every create answered 200 without waiting for it, a warning, then Redis again', async () => {
    const token = await issueToken('frozen-redis');
    const [redis] = await stack.containers('redis');
    const sent = await underSteadyLoad(
      token,
      6_000_000,
      async () => {
        await sleep(1_000);
        await stack.docker(['pause', redis.id]);
        try {
          await sleep(5_000);
        } finally {
          await stack.docker(['unpause', redis.id]);
        }
        await sleep(3_000);
      },
      FROZEN_LOAD_PER_SECOND,
    );
    expect(sent.filter(({ outcome }) => outcome !== '200')).toEqual([]);
    expect(sent.filter(({ durationMs }) => durationMs > REDIS_FROZEN_REQUEST_LIMIT_MS)).toEqual([]);
    await expectStored(sent);
    const logs = await stack.compose(['logs', '--no-color', 'api']);
    expect(logs).toContain('counting the rate limit in memory until it answers');
    expect(logs).toContain('Redis answers again: counting the rate limit in Redis');
  });

  it(`8. rolls ${REPLICAS} replicas to a new release with deploy/compose/rollout.sh under ${ROLLOUT_LOAD_PER_SECOND} creates a second: none failed, none lost, every replica on the new revision`, async () => {
    await allReplicasHealthy();
    const before = await stack.containers('api');
    const tokens = await Promise.all(
      Array.from({ length: ROLLOUT_TOKENS }, (_, index) => issueToken(`rollout-${index}`)),
    );
    // The new release: this tree's image at another revision, as a release built from a
    // later commit and pulled would be. (Built with --build-arg, podman 4.3's cache would
    // hand back the same image: it ignores build arguments.)
    const revision = `rollout-${stack.tag}`;
    const release = `plant-store:${stack.tag}-next`;
    const built = await stack.shell(
      `printf 'FROM plant-store:${stack.tag}\nLABEL org.opencontainers.image.revision=${revision}\nENV PLANT_STORE_REVISION=${revision}\n' | docker build -q -t ${release} -`,
    );
    expect(built.code, built.stderr).toBe(0);
    let rollout = { code: -1, stdout: '', stderr: '' };
    let rolloutSeconds = 0;
    const sent = await underSteadyLoad(
      tokens,
      7_000_000,
      async () => {
        await sleep(1_000);
        const started = performance.now();
        rollout = await stack.shell(`deploy/compose/rollout.sh --image ${release}`);
        rolloutSeconds = (performance.now() - started) / 1000;
        await sleep(1_000);
      },
      ROLLOUT_LOAD_PER_SECOND,
    );
    console.log(
      `${rollout.stderr}rollout of ${REPLICAS} replicas: ` +
        `${rolloutSeconds.toFixed(0)} s, ${sent.length} creates, ` +
        `${sent.filter(({ outcome }) => outcome !== '200').length} failed`,
    );
    expect(rollout.code, rollout.stderr).toBe(0);
    expect(sent.filter(({ outcome }) => outcome !== '200')).toEqual([]);
    await expectStored(sent);
    const after = await stack.containers('api');
    expect(after.filter(({ id }) => before.some((old) => old.id === id))).toEqual([]);
    expect(after.map(({ status }) => status)).toEqual(before.map(() => 'running'));
    for (const { address } of after) {
      const live = await send(`http://${address}:3000/health/live`);
      expect(JSON.parse(live.body)).toMatchObject({ version: packageVersion, revision });
    }
    const labels = async (image: string) =>
      (
        JSON.parse(await stack.docker(['image', 'inspect', image])) as {
          Config: { Labels: Record<string, string> };
        }[]
      )[0].Config.Labels['org.opencontainers.image.revision'];
    expect(await labels(`plant-store:${stack.tag}`)).toBe(revision);
    expect(await labels(`plant-store:${stack.tag}-previous`)).not.toBe(revision);
  });

  it('8. backs up with pg_dump under load as docs/operations/database.md says, then down -v, up and pg_restore: every plant acknowledged before the backup began, its token, the subscription signing with its secret', async () => {
    const drill = serverBackupDrill(`/tmp/${stack.project}.dump`);
    const token = await issueToken('backup', 'plants:read,plants:write,webhooks:manage');
    const startReceiver = () =>
      stack.compose(['run', '-d', '--name', receiverName(), 'migrate', 'node', '-e', RECEIVER]);
    await startReceiver();
    const subscribed = await send(`${stack.baseUrl}/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `http://${receiverName()}:4000/plant/webhook` }),
    });
    expect(subscribed.status, subscribed.body).toBe(201);
    const { id: subscription, secret } = JSON.parse(subscribed.body) as {
      id: string;
      secret: string;
    };
    await stack.docker(['rm', '--force', receiverName()]);

    let backupBegan = 0;
    const sent = await underSteadyLoad(token, 6_000_000, async () => {
      await sleep(2_000);
      backupBegan = performance.now();
      const backup = await stack.shell(drill.backup);
      expect(backup.code, backup.stderr).toBe(0);
      await sleep(1_000);
    });
    const before = sent.filter(
      ({ outcome, sentAt, durationMs }) => outcome === '200' && sentAt + durationMs < backupBegan,
    );
    expect(before.length).toBeGreaterThan(20);
    console.log(
      `pg_dump under ${LOAD_PER_SECOND} creates a second: ${sent.length} sent, ${before.length} acknowledged before it began`,
    );

    const [up, ...restore] = [drill.restore.at(-1)!, ...drill.restore.slice(0, -1)];
    for (const line of restore) {
      const { code, stderr } = await stack.shell(line);
      expect(code, `${line}\n${stderr}`).toBe(0);
    }
    expect(await stack.query('SELECT count(*) FROM plants')).not.toEqual(['0']);
    await upUntilHealthy(async () => {
      const { code, stderr } = await stack.shell(up);
      if (code !== 0) throw new Error(stderr);
    });
    await expect
      .poll(
        () =>
          send(`${stack.baseUrl}/health/ready`).then(
            ({ status }) => status,
            () => 0,
          ),
        READY_LIMIT,
      )
      .toBe(200);
    await expectStored(before);
    const read = await send(`${stack.baseUrl}/plants/${before[0].id}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(read.status).toBe(200);
    expect(await stack.compose(['logs', '--no-color', 'migrate'])).toMatch(
      /applied 0 migration\(s\)/,
    );

    await startReceiver();
    const id = 6_999_999;
    expect((await create(token, id)).status).toBe(200);
    const deliveries = async () =>
      (await stack.docker(['logs', receiverName()]))
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { headers: Record<string, string>; body: string });
    // Step 7's subscription has the same receiver: one of the deliveries is this one's.
    const signedWithItsSecret = async () =>
      (await deliveries()).some(({ body, headers }) => {
        try {
          new Webhook(secret).verify(body, headers);
          return body.includes(`"id":${id}`);
        } catch {
          return false;
        }
      });
    await expect.poll(signedWithItsSecret, { timeout: 60_000, interval: 250 }).toBe(true);
    expect(
      (
        await send(`${stack.baseUrl}/webhooks/${subscription}`, {
          headers: { authorization: `Bearer ${token}` },
        })
      ).status,
    ).toBe(200);
    await stack.docker(['rm', '--force', receiverName()]);
  });

  // 289 s in a run here, near the 300 s default: `compose run` thrice, down -v and up.
  it('8. moves its data out with npm run backup into an embedded database, and from a backup of that into a new stack with npm run restore, as docs/operations/database.md writes it', async () => {
    const workDir = mkdtempSync(join(tmpdir(), `${stack.project}-`));
    try {
      const [fromStack, fromEmbedded] = ['stack', 'embedded'].map((name) =>
        join(workDir, `${name}.backup.gz`),
      );
      const token = await issueToken('moved', 'plants:read');
      const [plants, [firstId]] = [
        await stack.query('SELECT count(*) FROM plants'),
        await stack.query('SELECT min(id) FROM plants'),
      ];
      const out = await stack.shell(
        `docker compose run --rm -T migrate npm run --silent backup -- - > ${fromStack}`,
      );
      expect(out.code, out.stderr).toBe(0);
      // The stack's key: the backups are signed, and its secrets encrypted, with it.
      const embedded = { DATA_DIR: join(workDir, 'data'), WEBHOOK_SECRET_KEYS: stackSecretKeys() };
      const intoEmbedded = await runBackupCli('restore', [fromStack], embedded);
      expect(intoEmbedded.code, intoEmbedded.stderr).toBe(0);
      const backup = await runBackupCli('backup', [fromEmbedded], embedded);
      expect(backup.code, backup.stderr).toBe(0);

      const { restore } = serverBackupDrill('unused');
      const [down, upDb, waitForDb] = restore;
      for (const line of [down, upDb, waitForDb, stackRestoreLine(fromEmbedded)]) {
        const { code, stderr } = await stack.shell(line);
        expect(code, `${line}\n${stderr}`).toBe(0);
      }
      await upUntilHealthy(() => runReadmeLine('docker compose up -d'));
      expect(await stack.query('SELECT count(*) FROM plants')).toEqual(plants);
      await expect
        .poll(
          () =>
            send(`${stack.baseUrl}/plants/${firstId}`, {
              headers: { authorization: `Bearer ${token}` },
            }).then(
              ({ status }) => status,
              () => 0,
            ),
          READY_LIMIT,
        )
        .toBe(200);
    } finally {
      rmSync(workDir, { recursive: true, force: true });
    }
  }, 600_000);

  it('8. with --profile monitoring, Prometheus scrapes every replica, and the database refusing writes fires PlantStoreDatabaseRefusingWrites through its API within its for, then resolves', async () => {
    const prometheus = `http://127.0.0.1:${await freePort()}`;
    stack.set('PROMETHEUS_PORT', new URL(prometheus).port);
    await upUntilHealthy(() => runReadmeLine('docker compose --profile monitoring up -d'));
    const api = async <T>(path: string): Promise<T> => {
      const { status, body } = await send(`${prometheus}${path}`);
      expect(status, body).toBe(200);
      return (JSON.parse(body) as { data: T }).data;
    };
    let readOnly = false;
    try {
      await expect
        .poll(
          () =>
            send(`${prometheus}/-/ready`).then(
              ({ status }) => status,
              () => 0,
            ),
          READY_LIMIT,
        )
        .toBe(200);
      const replicas = (await stack.containers('api')).filter(({ status }) => status === 'running');
      // Every replica, by its address on the network, found through DNS.
      await expect
        .poll(async () => {
          const { activeTargets } = await api<{
            activeTargets: { labels: { job: string; instance: string }; health: string }[];
          }>('/api/v1/targets?state=active');
          return activeTargets
            .filter(({ labels, health }) => labels.job === 'plant-store' && health === 'up')
            .map(({ labels }) => labels.instance)
            .sort();
        }, READY_LIMIT)
        .toEqual(replicas.map(({ address }) => `${address}:3000`).sort());
      const { groups } = await api<{
        groups: { rules: { name: string; for?: number; duration?: number }[] }[];
      }>('/api/v1/rules?type=alert');
      const rule = groups
        .flatMap(({ rules }) => rules)
        .find(({ name }) => name === 'PlantStoreDatabaseRefusingWrites')!;
      const forMs = (rule.duration ?? 0) * 1000;
      expect(forMs).toBeGreaterThan(0);

      type Alert = {
        labels: { alertname: string };
        annotations: Record<string, string>;
        state: string;
      };
      const refusingWrites = async () =>
        (await api<{ alerts: Alert[] }>('/api/v1/alerts')).alerts.find(
          ({ labels }) => labels.alertname === 'PlantStoreDatabaseRefusingWrites',
        );
      expect(await refusingWrites()).toBeUndefined();

      // As an operator may, by mistake: the whole server read-only, for every session.
      readOnly = true;
      await stack.query(
        'ALTER SYSTEM SET default_transaction_read_only = on; SELECT pg_reload_conf()',
      );
      const refusedAt = performance.now();
      const firingWithin = forMs + 2 * PROMETHEUS_INTERVAL_MS + WRITES_GAUGE_MS;
      await expect
        .poll(async () => (await refusingWrites())?.state, {
          timeout: firingWithin,
          interval: 500,
        })
        .toBe('firing');
      const firingSeconds = (performance.now() - refusedAt) / 1000;
      const firing = (await refusingWrites())!;
      expect(firing.annotations).toMatchObject({
        summary: expect.any(String),
        description: expect.any(String),
        runbook_url: 'docs/operations/runbooks.md#plantstoredatabaserefusingwrites',
      });
      // What users meet meanwhile: a create answers 503.
      expect((await create(readmeToken, 8_000_001)).status).toBe(503);

      await stack.query(
        'ALTER SYSTEM RESET default_transaction_read_only; SELECT pg_reload_conf()',
      );
      readOnly = false;
      const restoredAt = performance.now();
      await expect
        .poll(refusingWrites, {
          timeout: 2 * PROMETHEUS_INTERVAL_MS + WRITES_GAUGE_MS,
          interval: 500,
        })
        .toBeUndefined();
      const resolvedSeconds = (performance.now() - restoredAt) / 1000;
      console.log(
        `PlantStoreDatabaseRefusingWrites (for ${forMs / 1000} s, scraped and evaluated every ${PROMETHEUS_INTERVAL_MS / 1000} s): ` +
          `firing ${firingSeconds.toFixed(1)} s after the database refused writes, resolved ${resolvedSeconds.toFixed(1)} s after it took them again`,
      );
      expect((await create(readmeToken, 8_000_000)).status).toBe(200);
    } finally {
      if (readOnly)
        await stack.query(
          'ALTER SYSTEM RESET default_transaction_read_only; SELECT pg_reload_conf()',
        );
      // The steps after this one stop and remove the stack without the profile.
      await stack.compose(['--profile', 'monitoring', 'rm', '--stop', '--force', 'prometheus']);
    }
    // About 2 minutes: the alert's minute, and compose commands (4 at a load average of 30).
  }, 420_000);

  it('9. stops every service with exit code 0, pgbouncer included', async () => {
    await runReadmeLine('docker compose stop');
    const running = (await stack.containers()).filter(({ status }) => status !== 'exited');
    expect(running).toEqual([]);
    // The replica killed in step 6 was of the release the rollout replaced, and is gone.
    const exits = (await stack.containers()).map(({ service, exitCode }) => ({
      service,
      exitCode,
    }));
    expect(exits).toEqual(exits.map(({ service }) => ({ service, exitCode: 0 })));
    expect(exits.map(({ service }) => service)).toEqual(
      expect.arrayContaining(['db', 'pgbouncer', 'redis', 'migrate', 'api', 'balancer']),
    );
  });

  it('10. keeps plants and tokens across down and up; down -v leaves nothing of the project', async () => {
    await runReadmeLine('docker compose down');
    await upUntilHealthy(() => runReadmeLine('docker compose up -d'));
    await expect
      .poll(
        () =>
          send(`${stack.baseUrl}/plants/${README_PLANT_ID}`, {
            headers: { authorization: `Bearer ${readmeToken}` },
          }).then(
            ({ status, body }) => `${status} ${body}`,
            () => 'no answer',
          ),
        READY_LIMIT,
      )
      .toContain(`200 {"id":${README_PLANT_ID}`);
    await runReadmeLine('docker compose down -v');
    expect(await stack.leftovers()).toEqual([]);
  });

  it("11. the README's container section names the port setting and the receiver setting", () => {
    expect(readmeContainers.section).toContain('PLANT_STORE_PORT=');
    expect(readmeContainers.section).toContain('WEBHOOK_ALLOWED_HOSTS=');
  });
});
