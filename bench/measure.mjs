// What a bench run measures, shared by `npm run bench` (run.mjs) and `npm run
// bench:replicas` (replicas.ts): the load (autocannon), exact latencies, and the CPU of the
// processes serving it, read from /proc. See bench/README.md for what each figure means.
import { execFile, spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';

/** Plants seeded for the GET scenarios; POST ids start far above them. */
export const SEEDED_PLANTS = 10_000;
const CLOCK_TICKS_PER_SECOND = Number(
  (await promisify(execFile)('getconf', ['CLK_TCK'])).stdout.trim(),
);

/** The run's shape, from BENCH_* variables (bench/README.md), with these defaults. */
export function benchSettings(env, defaults) {
  return {
    warmupSeconds: Number(env.BENCH_WARMUP ?? 2),
    jitWarmupSeconds: Number(env.BENCH_JIT_WARMUP ?? 15),
    durationSeconds: Number(env.BENCH_DURATION ?? 10),
    rounds: Number(env.BENCH_ROUNDS ?? defaults.rounds),
    connections: (env.BENCH_CONNECTIONS ?? defaults.connections).split(',').map(Number),
    operations: (env.BENCH_OPERATIONS ?? 'POST,GET').split(','),
  };
}

export async function sql(url, text, values) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** The plants the GET scenarios read: ids 1 to SEEDED_PLANTS. */
export async function seedPlants(databaseUrl) {
  await sql(
    databaseUrl,
    `INSERT INTO plants (id, name, tag)
     SELECT i, 'Plant ' || i, CASE WHEN i % 2 = 0 THEN 'even' END FROM generate_series(1, $1) i`,
    [SEEDED_PLANTS],
  );
}

/** What the figures were measured on; `adminUrl` names the PostgreSQL server. */
export async function machine(adminUrl) {
  const [{ server_version: postgres }] = await sql(adminUrl, 'SHOW server_version');
  return {
    cpu: os.cpus()[0].model,
    cores: os.cpus().length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    kernel: os.release(),
    node: process.version,
    postgres,
  };
}

// ---- the servers ---------------------------------------------------------------------

const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;

/** The service as production runs it: `npm run start:prod` is `exec node <flags> <entry point>`. */
export async function startProdArgs(root) {
  const { scripts } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));
  return scripts['start:prod'].split(' ').slice(2);
}

/**
 * Starts `node args` in `root`, serving on 127.0.0.1:`port` with `databaseUrl`, its output
 * appended to `logFile`, and answers once it answers HTTP. `children` holds it until it
 * exits (to be stopped on the way out).
 */
export async function startServer({ name, args, port, root, databaseUrl, logFile, children, env }) {
  const output = openSync(logFile, 'a');
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '0',
      // The benches' webhook receivers listen on loopback.
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
      // Required with DATABASE_URL; a bench key, known to everyone.
      WEBHOOK_SECRET_KEYS:
        process.env.WEBHOOK_SECRET_KEYS ??
        `bench:${Buffer.from('bench-key-for-webhook-secrets-32').toString('base64')}`,
      ...env,
    },
    stdio: ['ignore', output, output],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const server = { name, child, port, url: `http://127.0.0.1:${port}` };
  while (!(await answers(server))) {
    if (child.exitCode !== null) throw new Error(`${name} exited at start; see ${logFile}`);
    if (performance.now() - started > READY_TIMEOUT_MS) throw new Error(`${name} never ready`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  server.startToReadyMs = performance.now() - started;
  return server;
}

async function answers({ url }) {
  try {
    await fetch(`${url}/plants/1`, { signal: AbortSignal.timeout(1000) });
    return true;
  } catch {
    return false;
  }
}

export async function stopServer({ child }) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

/** A new API token named `name` (`npm run token create`), for `databaseUrl`. */
export async function createToken(root, databaseUrl, name) {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['dist/src/cli/token.cli.js', 'create', '--name', name],
    { cwd: root, env: { ...process.env, DATABASE_URL: databaseUrl }, timeout: 30_000 },
  );
  return stdout.trim();
}

// ---- what a run costs: /proc -----------------------------------------------------------

async function cpuTicks(pid) {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime + stime
  } catch {
    return 0; // gone meanwhile
  }
}

const totalCpuTicks = async (pids) =>
  (await Promise.all(pids.map(cpuTicks))).reduce((sum, ticks) => sum + ticks, 0);

async function rssMiB(pid) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)[1]) / 1024;
}

/**
 * The machine's CPU time so far (/proc/stat): the part left idle, and the part the
 * hypervisor gave to other guests (steal). On a shared host the steal share explains much
 * of the run-to-run noise.
 */
async function machineTicks() {
  const [cpu] = (await readFile('/proc/stat', 'utf8')).split('\n', 1);
  // user nice system idle iowait irq softirq steal (guest time is already in user).
  const fields = cpu.split(/\s+/).slice(1, 9).map(Number);
  return {
    total: fields.reduce((sum, ticks) => sum + ticks, 0),
    idle: fields[3] + fields[4],
    steal: fields[7],
  };
}

/**
 * CPU ticks of a database's backends over a run, found through `monitor` (a connection to
 * another database). Pooled connections come and go, so the backends are sampled through
 * the run: each counts from its first sample (0 when it started during the run) to its
 * last. Shared PostgreSQL processes (WAL writer, checkpointer) are not counted.
 */
function backendTicks(monitor, database) {
  const first = new Map();
  const last = new Map();
  let starting = true;
  const sample = async () => {
    const { rows } = await monitor.query('SELECT pid FROM pg_stat_activity WHERE datname = $1', [
      database,
    ]);
    const pids = rows.map(({ pid }) => pid);
    const ticks = await Promise.all(pids.map(cpuTicks));
    pids.forEach((pid, i) => {
      if (!first.has(pid)) first.set(pid, starting ? ticks[i] : 0);
      last.set(pid, Math.max(last.get(pid) ?? 0, ticks[i]));
    });
    starting = false;
  };
  const total = () => [...last].reduce((sum, [pid, ticks]) => sum + ticks - first.get(pid), 0);
  return { sample, total };
}

// ---- load ----------------------------------------------------------------------------

let nextPlantId = 1_000_000_000_000;

/**
 * The requests of an operation: 'POST' (creates) or 'GET' (reads of the seeded plants), or
 * an operation's own `{ requests(headers) }` (bench/growth.mjs's).
 */
function requestsFor(operation, token) {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  if (typeof operation === 'object') return operation.requests(headers);
  if (operation === 'POST') {
    return [
      {
        method: 'POST',
        path: '/plants',
        headers,
        setupRequest: (request) => ({
          ...request,
          body: `{"id":${nextPlantId++},"name":"Monstera deliciosa","tag":"tropical"}`,
        }),
      },
    ];
  }
  let next = 0;
  return [
    {
      method: 'GET',
      headers,
      setupRequest: (request) => ({ ...request, path: `/plants/${(next++ % SEEDED_PLANTS) + 1}` }),
    },
  ];
}

/**
 * One autocannon run. Its histogram keeps whole milliseconds, too coarse for a p50 under
 * 1 ms, so the latencies are also collected here, exactly.
 */
function fire(target, operation, token, connections, seconds, latencies = []) {
  const run = autocannon({
    url: target.url,
    connections,
    duration: seconds,
    requests: requestsFor(operation, token),
    timeout: 10,
  });
  run.on('response', (_client, _status, _bytes, milliseconds) => latencies.push(milliseconds));
  let timer;
  const guard = new Promise((_, reject) => {
    timer = setTimeout(
      () => {
        run.stop();
        reject(new Error(`autocannon against ${target.name} did not finish`));
      },
      (seconds + 30) * 1000,
    );
  });
  return Promise.race([run, guard]).finally(() => clearTimeout(timer));
}

/**
 * Load, unmeasured, until V8 has compiled the servers' hot code: the service runs far
 * more JavaScript than the reference, and at first its optimising compiler works on V8's
 * worker threads for 15-20 s, which the first scenarios would otherwise count against it
 * (bench/README.md). The seconds are shared out over the scenarios' concurrencies, each
 * in turn: a path that only one of them takes stays cold under another's load (the
 * product's create alone, a batch of one, runs at one connection and seldom at 64).
 */
export async function warmUpJit({ target, operation, token, settings }) {
  const { jitWarmupSeconds, connections } = settings;
  for (const each of jitWarmupSeconds > 0 ? connections : []) {
    await fire(target, operation, token, each, jitWarmupSeconds / connections.length);
  }
}

/**
 * One scenario against `target` ({name, url}): a warm-up, then the measured run. CPU per
 * request is counted for the servers (`serverPids`, their resident memory too), for the
 * `enginePids` in front of them when there are any (a balancer, a pooler), for the
 * backends of `database` (found through `monitor`), and for this process, the load
 * generator.
 *
 * @param {{
 *   target: { name: string, url: string },
 *   operation: string,
 *   token: string,
 *   connections: number,
 *   settings: { warmupSeconds: number, durationSeconds: number },
 *   serverPids: number[],
 *   enginePids?: number[],
 *   monitor: import('pg').Client,
 *   database: string,
 * }} run
 */
export async function measure({
  target,
  operation,
  token,
  connections,
  settings,
  serverPids,
  enginePids = [],
  monitor,
  database,
}) {
  await fire(target, operation, token, connections, settings.warmupSeconds);
  const backends = backendTicks(monitor, database);
  await backends.sample();
  const serverTicksBefore = await totalCpuTicks(serverPids);
  const engineTicksBefore = await totalCpuTicks(enginePids);
  const loadCpuBefore = process.cpuUsage();
  const machineBefore = await machineTicks();
  let peakRss = 0;
  const residentMiB = async () =>
    (await Promise.all(serverPids.map((pid) => rssMiB(pid).catch(() => 0)))).reduce(
      (sum, mib) => sum + mib,
      0,
    );
  const sampler = setInterval(async () => {
    peakRss = Math.max(peakRss, await residentMiB());
    await backends.sample();
  }, 250);
  const latencies = [];
  const result = await fire(
    target,
    operation,
    token,
    connections,
    settings.durationSeconds,
    latencies,
  );
  latencies.sort((a, b) => a - b);
  const percentile = (p) =>
    latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))];
  clearInterval(sampler);
  const serverTicks = (await totalCpuTicks(serverPids)) - serverTicksBefore;
  const engineTicks = (await totalCpuTicks(enginePids)) - engineTicksBefore;
  const loadCpu = process.cpuUsage(loadCpuBefore);
  const machineAfter = await machineTicks();
  await backends.sample();
  const requests = result.requests.total;
  const cpuMicrosPerRequest = (ticks) => (ticks / CLOCK_TICKS_PER_SECOND / requests) * 1e6;
  const machineTotal = Math.max(1, machineAfter.total - machineBefore.total);
  const steal = machineAfter.steal - machineBefore.steal;
  return {
    requestsPerSecond: requests / result.duration,
    p50Ms: percentile(0.5),
    p99Ms: percentile(0.99),
    non2xx: result.non2xx,
    errors: result.errors,
    peakRssMiB: Math.max(peakRss, await residentMiB()),
    serverCpuUsPerRequest: cpuMicrosPerRequest(serverTicks),
    ...(enginePids.length > 0 && { engineCpuUsPerRequest: cpuMicrosPerRequest(engineTicks) }),
    databaseCpuUsPerRequest: cpuMicrosPerRequest(backends.total()),
    loadGeneratorCpuUsPerRequest: (loadCpu.user + loadCpu.system) / requests,
    busyPercent:
      (100 * (machineTotal - (machineAfter.idle - machineBefore.idle) - steal)) / machineTotal,
    stealPercent: (100 * steal) / machineTotal,
  };
}

// ---- reporting -----------------------------------------------------------------------

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Each figure's median over the rounds. */
export function summarize(rounds) {
  const keys = Object.keys(rounds[0]);
  return Object.fromEntries(keys.map((key) => [key, median(rounds.map((round) => round[key]))]));
}

/** A plain-text table, each column as wide as its widest cell. */
export function formatTable(header, rows) {
  const widths = header.map((title, i) =>
    Math.max(title.length, ...rows.map((r) => (r[i] ?? '').length)),
  );
  const line = (cells) =>
    cells
      .map((cell, i) => (cell ?? '').padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/**
 * Runs a bench's `main` once: its child servers (`children`) are killed if the process
 * exits anyway, and `cleanUp` (stop the servers, drop the databases) runs after `main`, on
 * SIGINT and SIGTERM, and after `timeLimitMs` when one is given, so that an interrupted or
 * stuck bench leaves nothing behind.
 */
export async function runBench({ main, cleanUp, children, timeLimitMs }) {
  const log = (line) => process.stderr.write(`${line}\n`);
  process.once('exit', () => children.forEach((child) => child.kill('SIGKILL')));
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => cleanUp().finally(() => process.exit(130)));
  }
  if (timeLimitMs !== undefined) {
    setTimeout(() => {
      log(`bench: over its time limit of ${timeLimitMs / 1000} s; stopping`);
      cleanUp().finally(() => process.exit(1));
    }, timeLimitMs).unref();
  }
  try {
    await main();
  } catch (error) {
    log(`bench: ${error.stack ?? error}`);
    process.exitCode = 1;
  } finally {
    await cleanUp();
  }
}
