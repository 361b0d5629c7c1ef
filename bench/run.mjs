// `npm run bench`: the built service against a hand-written Fastify + pg server (the
// yardstick, bench/reference/) and, with BENCH_FLOOR=1, against the design card's stack
// doing no more than that server (bench/floor/), on a fresh database of the local
// PostgreSQL, in alternating rounds. See bench/README.md for what it measures and how to
// read it.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import {
  benchSettings,
  createToken,
  formatTable,
  machine,
  measure,
  runBench,
  seedPlants,
  sql,
  startProdArgs,
  startServer as startShared,
  stopServer,
  summarize,
  warmUpJit,
} from './measure.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const resultsDir = join(root, 'bench', 'results');
const env = process.env;
const settings = {
  ...benchSettings(env, { rounds: 3, connections: '1,16,64' }),
  adminUrl: env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  /** BENCH_PROFILE=1: CPU profiles of the product and the floor, in bench/results/profiles/. */
  profile: env.BENCH_PROFILE === '1',
  /** BENCH_SLOW_SUBSCRIBERS=N: N webhook subscriptions whose receivers answer after 2 s. */
  slowSubscribers: Number(env.BENCH_SLOW_SUBSCRIBERS ?? 0),
  /** BENCH_FLOOR=1: the design card's floor (bench/floor/) as a second yardstick. */
  floor: env.BENCH_FLOOR === '1',
  /**
   * BENCH_TRACING=1: the product three times more, exporting traces to a collector
   * stand-in (bench/otlp-sink.mjs): every request sampled, one in ten, and none. Or the
   * names of some of those (BENCH_TRACING=traced0): one measured alone shares the sink
   * with no other's exports. `floor100` and `floor10`, with BENCH_FLOOR=1: the floor
   * traced as OpenTelemetry's documentation does it (bench/floor/traced-floor.ts), every
   * request sampled, or one in ten.
   */
  tracing: env.BENCH_TRACING ?? '',
};
/** How long a slow subscriber takes to answer a delivery. */
const SLOW_RECEIVER_MS = 2_000;
const PORTS = {
  product: 3950,
  reference: 3951,
  floor: 3952,
  traced100: 3953,
  traced10: 3954,
  traced0: 3955,
  floor100: 3956,
  floor10: 3957,
};
/** Whose figures are divided by whose in the table, when both servers ran. */
const COMPARISONS = [
  ['product', 'reference'],
  ['product', 'floor'],
  ['floor', 'reference'],
  ['traced100', 'product'],
  ['traced10', 'product'],
  ['traced0', 'product'],
  ['floor100', 'floor'],
  ['floor10', 'floor'],
  ['traced100', 'floor100'],
  ['traced10', 'floor10'],
];
/**
 * Each traced server: what it traces (the product, or the floor as
 * bench/floor/traced-floor.ts traces it) and the sampler settings it gets.
 */
const TRACED_SERVERS = {
  traced100: { of: 'product', env: { OTEL_TRACES_SAMPLER: 'parentbased_always_on' } },
  traced10: {
    of: 'product',
    env: { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' },
  },
  // Nothing sampled: what tracing being on costs every request.
  traced0: { of: 'product', env: { OTEL_TRACES_SAMPLER: 'parentbased_always_off' } },
  floor100: { of: 'floor', env: { OTEL_TRACES_SAMPLER_ARG: '1' } },
  floor10: { of: 'floor', env: { OTEL_TRACES_SAMPLER_ARG: '0.1' } },
};
/**
 * The traced servers this run starts: the three traced products with BENCH_TRACING=1,
 * else those it names.
 */
const TRACED = (
  settings.tracing === '1'
    ? ['traced100', 'traced10', 'traced0']
    : settings.tracing.split(',').filter(Boolean)
).map((name) => {
  if (!(name in TRACED_SERVERS)) throw new Error(`BENCH_TRACING: no traced server ${name}`);
  return { name, ...TRACED_SERVERS[name] };
});
if (TRACED.some(({ of }) => of === 'floor') && !settings.floor) {
  throw new Error('BENCH_TRACING: a traced floor needs BENCH_FLOOR=1');
}

const serverCount = 2 + (settings.floor ? 1 : 0) + TRACED.length;
const scenarioCount = settings.operations.length * settings.connections.length;
const runSeconds = settings.warmupSeconds + settings.durationSeconds + 5;
/** Every server's JIT warm-up, once per operation. */
const jitWarmupTotalSeconds = settings.operations.length * serverCount * settings.jitWarmupSeconds;
/** Everything, bounded: the rounds, the warm-ups, a minute for builds, starts and the database. */
const timeLimitMs =
  (scenarioCount * settings.rounds * serverCount * runSeconds + jitWarmupTotalSeconds + 60) * 1000;

const database = `plant_store_bench_${randomBytes(4).toString('hex')}`;
const databaseUrl = Object.assign(new URL(settings.adminUrl), { pathname: `/${database}` }).href;
const children = new Set();
/** One connection to the admin database for the samples taken during the runs. */
const monitor = new pg.Client({ connectionString: settings.adminUrl });
let databaseCreated = false;

function log(line) {
  process.stderr.write(`${line}\n`);
}

// ---- servers -------------------------------------------------------------------------

function startServer(name, args, extraEnv = {}) {
  return startShared({
    name,
    args,
    port: PORTS[name],
    root,
    databaseUrl,
    logFile: join(resultsDir, `${name}.log`),
    children,
    env: extraEnv,
  });
}

/** The collector stand-in the traced products export to; its OTLP endpoint. */
async function startOtlpSink() {
  const child = spawn(process.execPath, [join(root, 'bench', 'otlp-sink.mjs')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const [line] = await once(child.stdout, 'data');
  return `http://127.0.0.1:${JSON.parse(line.toString())}`;
}

/**
 * Webhook receivers that take SLOW_RECEIVER_MS to answer, subscribed to new plants. They
 * run in a process of their own: in this one they would slow the load generator.
 */
async function subscribeSlowReceivers(count) {
  if (count === 0) return;
  const child = spawn(
    process.execPath,
    [join(root, 'bench', 'slow-receivers.mjs'), String(count), String(SLOW_RECEIVER_MS)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  children.add(child);
  child.once('exit', () => children.delete(child));
  const [line] = await once(child.stdout, 'data');
  for (const port of JSON.parse(line.toString())) {
    await sql(databaseUrl, 'INSERT INTO webhook_subscriptions (url, secret) VALUES ($1, $2)', [
      `http://127.0.0.1:${port}/plant/webhook`,
      `whsec_${randomBytes(32).toString('base64')}`,
    ]);
  }
}

// ---- the run ---------------------------------------------------------------------------

async function routeExists(server, token) {
  const response = await fetch(`${server.url}/plants/1`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return response.status === 200;
}

async function main() {
  await mkdir(resultsDir, { recursive: true });
  await monitor.connect();
  await sql(settings.adminUrl, `CREATE DATABASE ${database}`);
  databaseCreated = true;
  log(`database ${database}; time limit ${Math.round(timeLimitMs / 1000)} s`);
  log(`Node.js ${process.version} runs every server`);

  const profileArgs = [
    '--cpu-prof',
    `--cpu-prof-dir=${join(resultsDir, 'profiles')}`,
    '--import=./bench/exit-on-sigterm.mjs',
  ];
  // The service as production runs it: `npm run start:prod` is `exec node <flags> <entry point>`.
  const startArgs = await startProdArgs(root);
  const nodeFlags = startArgs.slice(0, -1);
  const productArgs = [...(settings.profile ? profileArgs : []), ...startArgs];
  // The first start applies the migrations; the second is a start on a ready database.
  const firstStart = await startServer('product', productArgs);
  await stopServer(firstStart);
  const product = await startServer('product', productArgs);
  const sinkEndpoint = TRACED.length > 0 ? await startOtlpSink() : undefined;
  const tracedArgs = {
    product: productArgs,
    floor: [...nodeFlags, 'dist/bench/floor/traced-floor.js'],
  };
  const startTraced = (tracing) =>
    startServer(tracing.name, tracedArgs[tracing.of], {
      OTEL_EXPORTER_OTLP_ENDPOINT: sinkEndpoint,
      ...tracing.env,
    });
  const traced = [];
  for (const tracing of TRACED.filter(({ of }) => of === 'product')) {
    traced.push(await startTraced(tracing));
  }
  const yardsticks = [await startServer('reference', ['bench/reference/server.mjs'])];
  if (settings.floor) {
    // The floor runs with the product's Node flags: they are a deployment choice, not code.
    yardsticks.push(
      await startServer('floor', [
        ...(settings.profile ? profileArgs : []),
        ...nodeFlags,
        'dist/bench/floor/floor.js',
      ]),
    );
  }
  for (const tracing of TRACED.filter(({ of }) => of === 'floor')) {
    yardsticks.push(await startTraced(tracing));
  }
  const servers = [product, ...traced, ...yardsticks];
  log(
    `start to ready: product ${firstStart.startToReadyMs.toFixed(0)} ms with migrations, ` +
      servers
        .map(({ name, startToReadyMs }) => `${name} ${startToReadyMs.toFixed(0)} ms`)
        .join(', '),
  );
  const token = await createToken(root, databaseUrl, `bench-${database}`);
  await subscribeSlowReceivers(settings.slowSubscribers);
  await seedPlants(databaseUrl);

  const scenarios = [];
  for (const operation of settings.operations) {
    const missing = operation === 'GET' && !(await routeExists(product, token));
    if (!missing) {
      for (const target of servers) {
        await warmUpJit({ target, operation, token, settings });
      }
    }
    for (const connections of settings.connections) {
      const scenario = { operation, connections, rounds: {} };
      for (const { name } of servers) scenario.rounds[name] = [];
      scenarios.push(scenario);
      if (missing) {
        scenario.skipped = 'route missing';
        continue;
      }
      for (let round = 1; round <= settings.rounds; round++) {
        for (const server of servers) {
          const figures = await measure({
            target: server,
            operation,
            token,
            connections,
            settings,
            serverPids: [server.child.pid],
            monitor,
            database,
          });
          scenario.rounds[server.name].push(figures);
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
    machine: await machine(settings.adminUrl),
    settings: { ...settings, adminUrl: undefined },
    startToReadyMs: {
      productWithMigrations: firstStart.startToReadyMs,
      ...Object.fromEntries(servers.map(({ name, startToReadyMs }) => [name, startToReadyMs])),
    },
    scenarios: scenarios.map((scenario) => {
      if (scenario.skipped) return scenario;
      const summary = Object.fromEntries(
        servers.map(({ name }) => [name, summarize(scenario.rounds[name])]),
      );
      return {
        ...scenario,
        summary,
        ratio: Object.fromEntries(
          COMPARISONS.filter(([a, b]) => summary[a] && summary[b]).map(([a, b]) => [
            `${shortName(a)}/${shortName(b)}`,
            ratioOf(summary[a], summary[b]),
          ]),
        ),
      };
    }),
  };
  await Promise.all(servers.map(stopServer));
  await writeFile(join(resultsDir, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(table(report));
  log(`written to ${join('bench', 'results', 'latest.json')}`);
}

function shortName(server) {
  return server === 'reference' ? 'ref' : server;
}

function ratioOf(server, yardstick) {
  return {
    requestsPerSecond: server.requestsPerSecond / yardstick.requestsPerSecond,
    p50: server.p50Ms / yardstick.p50Ms,
    p99: server.p99Ms / yardstick.p99Ms,
    serverCpuPerRequest: server.serverCpuUsPerRequest / yardstick.serverCpuUsPerRequest,
  };
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
    for (const [server, s] of Object.entries(scenario.summary)) {
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
    for (const [comparison, ratio] of Object.entries(scenario.ratio)) {
      rows.push([
        name,
        comparison,
        `${ratio.requestsPerSecond.toFixed(2)}x`,
        `${ratio.p50.toFixed(2)}x`,
        `${ratio.p99.toFixed(2)}x`,
        '',
        `${ratio.serverCpuPerRequest.toFixed(2)}x`,
      ]);
    }
  }
  const ready = Object.entries(startToReadyMs)
    .map(([name, ms]) => `${name} ${ms.toFixed(0)} ms`)
    .join(', ');
  return `${formatTable(header, rows)}\n\nstart to ready: ${ready}\n`;
}

async function cleanUp() {
  await Promise.all([...children].map((child) => stopServer({ child })));
  await monitor.end().catch(() => undefined);
  if (databaseCreated) {
    await sql(settings.adminUrl, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    databaseCreated = false;
  }
}

await runBench({ main, cleanUp, children, timeLimitMs });
