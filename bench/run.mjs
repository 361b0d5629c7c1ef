// `npm run bench`: the built service against a hand-written Fastify + pg server (the
// yardstick, bench/reference/), on a fresh database of the local PostgreSQL, in
// alternating rounds. See bench/README.md for what it measures and how to read it.
import { spawn, execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { openSync } from 'node:fs';
import { createServer } from 'node:http';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const resultsDir = join(root, 'bench', 'results');
const env = process.env;
const settings = {
  adminUrl: env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  warmupSeconds: Number(env.BENCH_WARMUP ?? 2),
  durationSeconds: Number(env.BENCH_DURATION ?? 10),
  rounds: Number(env.BENCH_ROUNDS ?? 3),
  connections: (env.BENCH_CONNECTIONS ?? '1,16,64').split(',').map(Number),
  operations: (env.BENCH_OPERATIONS ?? 'POST,GET').split(','),
  /** BENCH_PROFILE=1: a CPU profile of the product, in bench/results/profiles/. */
  profile: env.BENCH_PROFILE === '1',
  /** BENCH_SLOW_SUBSCRIBERS=N: N webhook subscriptions whose receivers answer after 2 s. */
  slowSubscribers: Number(env.BENCH_SLOW_SUBSCRIBERS ?? 0),
};
/** How long a slow subscriber takes to answer a delivery. */
const SLOW_RECEIVER_MS = 2_000;
const PRODUCT_PORT = 3950;
const REFERENCE_PORT = 3951;
/** Plants seeded for the GET scenarios; POST ids start far above them. */
const SEEDED_PLANTS = 10_000;
const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;
const CLOCK_TICKS_PER_SECOND = Number(
  (await promisify(execFile)('getconf', ['CLK_TCK'])).stdout.trim(),
);

const scenarioCount = settings.operations.length * settings.connections.length;
const runSeconds = settings.warmupSeconds + settings.durationSeconds + 5;
/** Everything, bounded: the rounds, plus a minute for builds, starts and the database. */
const timeLimitMs = (scenarioCount * settings.rounds * 2 * runSeconds + 60) * 1000;

const database = `plant_store_bench_${randomBytes(4).toString('hex')}`;
const databaseUrl = Object.assign(new URL(settings.adminUrl), { pathname: `/${database}` }).href;
const children = new Set();
/** The slow subscribers' receivers, on loopback. */
const receivers = [];
/** One connection to the admin database for the samples taken during the runs. */
const monitor = new pg.Client({ connectionString: settings.adminUrl });
let databaseCreated = false;

function log(line) {
  process.stderr.write(`${line}\n`);
}

async function sql(url, text, values) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows;
  } finally {
    await client.end();
  }
}

// ---- servers -------------------------------------------------------------------------

async function startServer(name, args, port) {
  const logFile = join(resultsDir, `${name}.log`);
  const output = openSync(logFile, 'a');
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: {
      ...env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '0',
      // The slow subscribers listen on loopback.
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
    },
    stdio: ['ignore', output, output],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const server = { name, child, port, url: `http://127.0.0.1:${port}` };
  while (!(await answers(server))) {
    if (child.exitCode !== null) throw new Error(`${name} exited at start; see ${logFile}`);
    if (performance.now() - started > READY_TIMEOUT_MS) throw new Error(`${name} never ready`);
    await sleep(5);
  }
  server.startToReadyMs = performance.now() - started;
  return server;
}

/** Webhook receivers that take SLOW_RECEIVER_MS to answer, subscribed to new plants. */
async function subscribeSlowReceivers(count) {
  for (let index = 0; index < count; index++) {
    const receiver = createServer((request, response) => {
      request.resume();
      setTimeout(() => response.end(), SLOW_RECEIVER_MS).unref();
    });
    await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receivers.push(receiver);
    await sql(databaseUrl, 'INSERT INTO webhook_subscriptions (url, secret) VALUES ($1, $2)', [
      `http://127.0.0.1:${receiver.address().port}/plant/webhook`,
      `whsec_${randomBytes(32).toString('base64')}`,
    ]);
  }
}

async function answers({ url }) {
  try {
    await fetch(`${url}/plants/1`, { signal: AbortSignal.timeout(1000) });
    return true;
  } catch {
    return false;
  }
}

async function stopServer({ child }) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
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

async function rssMiB(pid) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)[1]) / 1024;
}

/**
 * The machine's CPU time so far (/proc/stat), with the part the hypervisor gave to other
 * guests (steal). On a shared host the steal share explains much of the run-to-run noise.
 */
async function machineTicks() {
  const [cpu] = (await readFile('/proc/stat', 'utf8')).split('\n', 1);
  // user nice system idle iowait irq softirq steal (guest time is already in user).
  const fields = cpu.split(/\s+/).slice(1, 9).map(Number);
  return { total: fields.reduce((sum, ticks) => sum + ticks, 0), steal: fields[7] };
}

/** The PostgreSQL backends serving the bench database (other databases are not ours). */
async function backendPids() {
  const { rows } = await monitor.query('SELECT pid FROM pg_stat_activity WHERE datname = $1', [
    database,
  ]);
  return rows.map(({ pid }) => pid);
}

/**
 * CPU ticks of the database's backends over a run. Pooled connections come and go, so
 * the backends are sampled through the run: each counts from its first sample (0 when it
 * started during the run) to its last.
 */
function backendTicks() {
  const first = new Map();
  const last = new Map();
  let starting = true;
  const sample = async () => {
    const pids = await backendPids();
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

function requestsFor(operation, token) {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
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
function fire(server, operation, token, connections, seconds, latencies = []) {
  const run = autocannon({
    url: server.url,
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
        reject(new Error(`autocannon against ${server.name} did not finish`));
      },
      (seconds + 30) * 1000,
    );
  });
  return Promise.race([run, guard]).finally(() => clearTimeout(timer));
}

async function measure(server, operation, token, connections) {
  await fire(server, operation, token, connections, settings.warmupSeconds);
  const backends = backendTicks();
  await backends.sample();
  const serverTicksBefore = await cpuTicks(server.child.pid);
  const machineBefore = await machineTicks();
  let peakRss = 0;
  const sampler = setInterval(async () => {
    peakRss = Math.max(peakRss, await rssMiB(server.child.pid).catch(() => 0));
    await backends.sample();
  }, 250);
  const latencies = [];
  const result = await fire(
    server,
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
  const serverTicks = (await cpuTicks(server.child.pid)) - serverTicksBefore;
  const machineAfter = await machineTicks();
  await backends.sample();
  const requests = result.requests.total;
  const cpuMicrosPerRequest = (ticks) => (ticks / CLOCK_TICKS_PER_SECOND / requests) * 1e6;
  return {
    requestsPerSecond: requests / result.duration,
    p50Ms: percentile(0.5),
    p99Ms: percentile(0.99),
    non2xx: result.non2xx,
    errors: result.errors,
    peakRssMiB: Math.max(peakRss, await rssMiB(server.child.pid)),
    serverCpuUsPerRequest: cpuMicrosPerRequest(serverTicks),
    databaseCpuUsPerRequest: cpuMicrosPerRequest(backends.total()),
    stealPercent:
      (100 * (machineAfter.steal - machineBefore.steal)) /
      Math.max(1, machineAfter.total - machineBefore.total),
  };
}

// ---- the run ---------------------------------------------------------------------------

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function summarize(rounds) {
  const keys = Object.keys(rounds[0]);
  return Object.fromEntries(keys.map((key) => [key, median(rounds.map((round) => round[key]))]));
}

async function createToken() {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['dist/src/auth/cli/token.cli.js', 'create', '--name', `bench-${database}`],
    { cwd: root, env: { ...env, DATABASE_URL: databaseUrl }, timeout: 30_000 },
  );
  return stdout.trim();
}

async function routeExists(server, token) {
  const response = await fetch(`${server.url}/plants/1`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return response.status === 200;
}

async function machine() {
  const [{ server_version: postgres }] = await sql(settings.adminUrl, 'SHOW server_version');
  return {
    cpu: os.cpus()[0].model,
    cores: os.cpus().length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    kernel: os.release(),
    node: process.version,
    postgres,
  };
}

async function main() {
  await mkdir(resultsDir, { recursive: true });
  await monitor.connect();
  await sql(settings.adminUrl, `CREATE DATABASE ${database}`);
  databaseCreated = true;
  log(`database ${database}; time limit ${Math.round(timeLimitMs / 1000)} s`);
  log(`Node.js ${process.version} runs both servers`);

  const profileArgs = [
    '--cpu-prof',
    `--cpu-prof-dir=${join(resultsDir, 'profiles')}`,
    '--import=./bench/exit-on-sigterm.mjs',
  ];
  // The service as production runs it: `npm run start:prod` is `node <flags> <entry point>`.
  const [, ...startArgs] = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')).scripts[
    'start:prod'
  ].split(' ');
  const productArgs = [...(settings.profile ? profileArgs : []), ...startArgs];
  // The first start applies the migrations; the second is a start on a ready database.
  const firstStart = await startServer('product', productArgs, PRODUCT_PORT);
  await stopServer(firstStart);
  const product = await startServer('product', productArgs, PRODUCT_PORT);
  const reference = await startServer('reference', ['bench/reference/server.mjs'], REFERENCE_PORT);
  log(
    `start to ready: product ${firstStart.startToReadyMs.toFixed(0)} ms with migrations, ` +
      `${product.startToReadyMs.toFixed(0)} ms after; reference ${reference.startToReadyMs.toFixed(0)} ms`,
  );
  const token = await createToken();
  await subscribeSlowReceivers(settings.slowSubscribers);
  await sql(
    databaseUrl,
    `INSERT INTO plants (id, name, tag)
     SELECT i, 'Plant ' || i, CASE WHEN i % 2 = 0 THEN 'even' END FROM generate_series(1, $1) i`,
    [SEEDED_PLANTS],
  );

  const scenarios = [];
  for (const operation of settings.operations) {
    const missing = operation === 'GET' && !(await routeExists(product, token));
    for (const connections of settings.connections) {
      const scenario = { operation, connections, product: [], reference: [] };
      scenarios.push(scenario);
      if (missing) {
        scenario.skipped = 'route missing';
        continue;
      }
      for (let round = 1; round <= settings.rounds; round++) {
        for (const server of [product, reference]) {
          const figures = await measure(server, operation, token, connections);
          scenario[server.name].push(figures);
          log(
            `${operation} c=${connections} round ${round} ${server.name}: ` +
              `${figures.requestsPerSecond.toFixed(0)} req/s, p99 ${figures.p99Ms.toFixed(1)} ms, ` +
              `steal ${figures.stealPercent.toFixed(0)} %`,
          );
        }
      }
    }
  }

  const report = {
    date: new Date().toISOString(),
    machine: await machine(),
    settings: { ...settings, adminUrl: undefined },
    startToReadyMs: {
      productWithMigrations: firstStart.startToReadyMs,
      product: product.startToReadyMs,
      reference: reference.startToReadyMs,
    },
    scenarios: scenarios.map(({ product: a, reference: b, ...scenario }) => {
      if (scenario.skipped) return scenario;
      const summary = { product: summarize(a), reference: summarize(b) };
      return {
        ...scenario,
        ...summary,
        ratio: {
          requestsPerSecond:
            summary.product.requestsPerSecond / summary.reference.requestsPerSecond,
          p99: summary.product.p99Ms / summary.reference.p99Ms,
        },
        rounds: { product: a, reference: b },
      };
    }),
  };
  await stopServer(product);
  await stopServer(reference);
  await writeFile(join(resultsDir, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(table(report));
  log(`written to ${join('bench', 'results', 'latest.json')}`);
}

function table({ scenarios, startToReadyMs }) {
  const header = [
    'scenario',
    'server',
    'req/s',
    'p50 ms',
    'p99 ms',
    'RSS MiB',
    'CPU µs/req server',
    'CPU µs/req PG',
    'steal %',
    'non-2xx',
  ];
  const rows = [];
  for (const scenario of scenarios) {
    const name = `${scenario.operation} c=${scenario.connections}`;
    if (scenario.skipped) {
      rows.push([name, `skipped: ${scenario.skipped}`]);
      continue;
    }
    for (const server of ['product', 'reference']) {
      const s = scenario[server];
      rows.push([
        name,
        server,
        s.requestsPerSecond.toFixed(0),
        s.p50Ms.toFixed(2),
        s.p99Ms.toFixed(2),
        s.peakRssMiB.toFixed(0),
        s.serverCpuUsPerRequest.toFixed(0),
        s.databaseCpuUsPerRequest.toFixed(0),
        s.stealPercent.toFixed(0),
        String(s.non2xx + s.errors),
      ]);
    }
    const { ratio } = scenario;
    rows.push([
      name,
      'product/ref',
      `${ratio.requestsPerSecond.toFixed(2)}x`,
      '',
      `${ratio.p99.toFixed(2)}x`,
    ]);
  }
  const widths = header.map((title, i) =>
    Math.max(title.length, ...rows.map((r) => (r[i] ?? '').length)),
  );
  const line = (cells) =>
    cells
      .map((cell, i) => (cell ?? '').padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  const ready = Object.entries(startToReadyMs)
    .map(([name, ms]) => `${name} ${ms.toFixed(0)} ms`)
    .join(', ');
  return `${[line(header), ...rows.map(line)].join('\n')}\n\nstart to ready: ${ready}\n`;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

async function cleanUp() {
  await Promise.all([...children].map((child) => stopServer({ child })));
  for (const receiver of receivers.splice(0)) {
    receiver.closeAllConnections();
    receiver.close();
  }
  await monitor.end().catch(() => undefined);
  if (databaseCreated) {
    await sql(settings.adminUrl, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    databaseCreated = false;
  }
}

process.once('exit', () => children.forEach((child) => child.kill('SIGKILL')));
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => cleanUp().finally(() => process.exit(130)));
}
setTimeout(() => {
  log(`bench: over its time limit of ${timeLimitMs / 1000} s; stopping`);
  cleanUp().finally(() => process.exit(1));
}, timeLimitMs).unref();

try {
  await main();
} catch (error) {
  log(`bench: ${error.stack ?? error}`);
  process.exitCode = 1;
} finally {
  await cleanUp();
}
