// `npm run bench:growth`: the same load on two databases of the local PostgreSQL, each
// served by the built service: one stays empty, the other grows to each of
// BENCH_GROWTH_PLANTS plants and then gets BENCH_GROWTH_DELIVERIES delivered webhook
// deliveries kept. At each size the two are measured in alternation, and each figure is
// a ratio of the grown database's to the empty one's. See bench/README.md.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { mkdir } from 'node:fs/promises';
import { loadavg } from 'node:os';
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
  sql,
  startProdArgs,
  startServer,
  stopServer,
  warmUpJit,
} from './measure.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const env = process.env;
const settings = {
  ...benchSettings(env, { rounds: 1, connections: '16' }),
  adminUrl: env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  /** The sizes measured after the empty database, in plants. */
  plants: (env.BENCH_GROWTH_PLANTS ?? '1000000,10000000').split(',').map(Number),
  /** Delivered deliveries added last, to the largest size (0: none). */
  deliveries: Number(env.BENCH_GROWTH_DELIVERIES ?? 10_000_000),
  /** Creates a second while webhook receipt is measured (open loop). */
  webhookRate: Number(env.BENCH_GROWTH_WEBHOOK_RATE ?? 100),
};
/**
 * The "empty" database: the plants the reads and the lists need, a few pages. The other
 * grows from there in place, as a real database grows.
 */
const EMPTY_PLANTS = 10_000;
const PAGE = 20;
const TAG = 'tropical';
const SUBSCRIBERS = 2;
const PORTS = { empty: 3960, grown: 3961 };

const run = `plant_store_growth_${randomBytes(4).toString('hex')}`;
const databases = Object.fromEntries(
  Object.keys(PORTS).map((name) => {
    const database = `${run}_${name}`;
    const url = Object.assign(new URL(settings.adminUrl), { pathname: `/${database}` }).href;
    return [name, { name, database, url }];
  }),
);
const created = [];
const children = new Set();
const monitor = new pg.Client({ connectionString: settings.adminUrl });

const log = (line) => process.stderr.write(`${line}\n`);
const load = () =>
  loadavg()
    .map((value) => value.toFixed(1))
    .join(' ');

// ---- the plants: the n-th plant's id, spread over the signed 64-bit range --------------

/**
 * Fibonacci hashing: n times 2^64/φ, modulo 2^64, as a signed integer. Multiplying by an
 * odd number is a bijection modulo 2^64, so every n has its own id, and consecutive n land
 * far apart: ids in creation order are in random key order, as clients' ids would be.
 */
const GOLDEN = 11400714819323198485n;
const idOf = (n) => BigInt.asIntN(64, BigInt(n) * GOLDEN);
/** The same, in SQL (numeric: bigint arithmetic would overflow). */
const ID_OF_N = `(((n::numeric * ${GOLDEN}) % 18446744073709551616 + 9223372036854775808)
                  % 18446744073709551616 - 9223372036854775808)::bigint`;

async function timed(label, work) {
  const started = performance.now();
  await work();
  log(`  ${label}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

/** Plants `from` to `to` (one in ten tagged), then VACUUM ANALYZE as autovacuum would. */
async function growPlants(databaseUrl, from, to) {
  await timed(`plants ${from} to ${to}`, () =>
    sql(
      databaseUrl,
      `INSERT INTO plants (id, name, tag)
       SELECT ${ID_OF_N}, 'Plant ' || n, CASE WHEN n % 10 = 0 THEN '${TAG}' END
       FROM generate_series($1::bigint, $2::bigint) AS n`,
      [from, to],
    ),
  );
  await timed('VACUUM ANALYZE plants', () => sql(databaseUrl, 'VACUUM ANALYZE plants'));
}

/**
 * `count` delivered deliveries to the subscriptions, created over the last 29 days (inside
 * the default retention of 30, which keeps them), payloads as the service writes them.
 */
async function addDeliveries(databaseUrl, count) {
  await timed(`${count} delivered deliveries`, () =>
    sql(
      databaseUrl,
      `INSERT INTO webhook_deliveries
         (subscription_id, payload, status, attempts, next_attempt_at, created_at, delivered_at)
       SELECT subscription.id, format('{"id":%s,"name":"Plant %s"}', ${ID_OF_N}, n),
              'delivered', 1, at, at, at
       FROM generate_series(1, $1::bigint) AS n
       CROSS JOIN LATERAL (SELECT now() - interval '29 days' * (1 - n::float8 / $1) AS at) AS t
       JOIN (SELECT id, row_number() OVER (ORDER BY id) - 1 AS i FROM webhook_subscriptions)
         AS subscription ON subscription.i = n % ${SUBSCRIBERS}`,
      [count],
    ),
  );
  await timed('VACUUM ANALYZE webhook_deliveries', () =>
    sql(databaseUrl, 'VACUUM ANALYZE webhook_deliveries'),
  );
}

// ---- the load ----------------------------------------------------------------------------

const randomIndex = (plants) => 1 + Math.floor(Math.random() * plants);
const cursorOf = (id) => Buffer.from(String(id)).toString('base64url');

/** The operations measured, as measure.mjs takes them, over a database of `plants`. */
function operations(plants) {
  const get = (path) => (headers) => [
    { method: 'GET', headers, setupRequest: (request) => ({ ...request, path: path() }) },
  ];
  return [
    {
      name: 'create',
      requests: (headers) => [
        {
          method: 'POST',
          path: '/plants',
          headers,
          // A random id: among 10^7 of 2^64, a conflict is a 1-in-10^12 event.
          setupRequest: (request) => ({
            ...request,
            body: `{"id":${randomBytes(8).readBigInt64BE()},"name":"Monstera deliciosa"}`,
          }),
        },
      ],
    },
    { name: 'read by id', requests: get(() => `/plants/${idOf(randomIndex(plants))}`) },
    { name: 'list, first page', requests: get(() => `/plants?limit=${PAGE}`) },
    {
      name: 'list, deep page',
      requests: get(() => `/plants?limit=${PAGE}&cursor=${cursorOf(idOf(randomIndex(plants)))}`),
    },
    {
      name: 'list by tag',
      requests: get(
        () => `/plants?limit=${PAGE}&tag=${TAG}&cursor=${cursorOf(idOf(randomIndex(plants)))}`,
      ),
    },
  ];
}

/**
 * Webhook receivers on loopback: when each plant's delivery first arrived at each, by
 * plant id (deliveries are at least once: a repeat, after a lease ran out under load,
 * does not count again).
 */
async function startReceivers() {
  const received = new Map();
  const ports = [];
  for (let i = 0; i < SUBSCRIBERS; i++) {
    const server = createServer((request, response) => {
      let body = '';
      request.setEncoding('utf8');
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        const at = performance.now();
        const id = /"id":(-?\d+)/.exec(body)[1];
        if (!received.has(`${i}:${id}`)) received.set(`${i}:${id}`, at);
        response.writeHead(200).end();
      });
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    server.unref();
    ports.push(server.address().port);
  }
  return { received, ports };
}

/** Waits until every event of a database is fanned out and every delivery settled. */
async function drained(databaseUrl) {
  for (;;) {
    const [{ left }] = await sql(
      databaseUrl,
      `SELECT (SELECT count(*) FROM webhook_events)
            + (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending') AS left`,
    );
    if (Number(left) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Webhook receipt: creates at `webhookRate` a second (open loop) for the run's duration,
 * each delivery timed from its create's 200 to its receipt; throughput is deliveries
 * received a second, from the first create to the last receipt.
 */
async function webhookReceipt({ service, token, url }, receivers) {
  await drained(url);
  const count = settings.webhookRate * settings.durationSeconds;
  const answered = new Map();
  const started = performance.now();
  const creates = [];
  for (let i = 0; i < count; i++) {
    const wait = started + (i * 1000) / settings.webhookRate - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const id = String(randomBytes(8).readBigInt64BE());
    creates.push(
      fetch(`${service.url}/plants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: `{"id":${id},"name":"Monstera deliciosa"}`,
      }).then(async (response) => {
        await response.arrayBuffer();
        if (response.status !== 200) throw new Error(`create answered ${response.status}`);
        answered.set(id, performance.now());
      }),
    );
  }
  await Promise.all(creates);
  const deadline = performance.now() + 60_000;
  const receipts = () =>
    [...answered.keys()].flatMap((id) =>
      receivers.ports.map((_, i) => receivers.received.get(`${i}:${id}`)).filter(Boolean),
    );
  while (receipts().length < count * SUBSCRIBERS) {
    if (performance.now() > deadline) throw new Error('webhook deliveries missing after 60 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const latencies = [...answered].flatMap(([id, at]) =>
    receivers.ports.map((_, i) => receivers.received.get(`${i}:${id}`) - at),
  );
  latencies.sort((a, b) => a - b);
  const percentile = (p) =>
    latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))];
  return {
    requestsPerSecond: latencies.length / ((Math.max(...receipts()) - started) / 1000),
    p50Ms: percentile(0.5),
    p99Ms: percentile(0.99),
  };
}

// ---- the run -----------------------------------------------------------------------------

async function tableSizes(databaseUrl) {
  const rows = await sql(
    databaseUrl,
    `SELECT relname AS table, pg_total_relation_size(oid) AS bytes, reltuples::bigint AS rows
     FROM pg_class WHERE relname IN ('plants', 'webhook_deliveries')`,
  );
  return Object.fromEntries(rows.map((row) => [row.table, row]));
}

/** A database of EMPTY_PLANTS plants, subscribed to the receivers, and its service. */
async function prepare(target, receivers) {
  await sql(settings.adminUrl, `CREATE DATABASE ${target.database}`);
  created.push(target.database);
  const server = {
    name: target.name,
    args: await startProdArgs(root),
    port: PORTS[target.name],
    root,
    databaseUrl: target.url,
    logFile: join(root, 'bench', 'results', `growth-${target.name}.log`),
    children,
  };
  // The first start applies the migrations.
  await stopServer(await startServer(server));
  target.service = await startServer(server);
  target.token = await createToken(root, target.url, `bench-${target.database}`);
  for (const port of receivers.ports) {
    await sql(target.url, 'INSERT INTO webhook_subscriptions (url, secret) VALUES ($1, $2)', [
      `http://127.0.0.1:${port}/plant/webhook`,
      `whsec_${randomBytes(32).toString('base64')}`,
    ]);
  }
  await growPlants(target.url, 1, EMPTY_PLANTS);
}

async function main() {
  await monitor.connect();
  await mkdir(join(root, 'bench', 'results'), { recursive: true });
  log(`databases ${run}_*; load average ${load()}`);
  const receivers = await startReceivers();
  const { empty, grown } = databases;
  for (const target of [empty, grown]) await prepare(target, receivers);
  const connections = settings.connections[0];
  for (const target of [empty, grown]) {
    for (const operation of operations(EMPTY_PLANTS)) {
      await warmUpJit({ target: target.service, operation, token: target.token, settings });
    }
  }

  const datasets = settings.plants.map((plants) => ({ name: `${plants / 1e6} M plants`, plants }));
  if (settings.deliveries > 0) {
    const largest = datasets.at(-1).plants;
    datasets.push({
      name: `${largest / 1e6} M plants, ${settings.deliveries / 1e6} M deliveries`,
      plants: largest,
      deliveries: settings.deliveries,
    });
  }
  const results = [];
  let plants = EMPTY_PLANTS;
  for (const dataset of datasets) {
    log(`${dataset.name}: load average ${load()}`);
    if (dataset.plants > plants) await growPlants(grown.url, plants + 1, dataset.plants);
    plants = dataset.plants;
    if (dataset.deliveries) await addDeliveries(grown.url, dataset.deliveries);
    const result = { ...dataset, load: [load()], figures: { empty: {}, grown: {} } };
    const sizes = { empty: EMPTY_PLANTS, grown: plants };
    for (let round = 1; round <= settings.rounds; round++) {
      for (const [index, operation] of operations(EMPTY_PLANTS).entries()) {
        for (const target of [empty, grown]) {
          // Both: the other service's worker still sending its creates' deliveries would
          // take the cores from this one's run.
          for (const database of [empty, grown]) await drained(database.url);
          // The same operation, over the plants this database has.
          const figures = await measure({
            target: target.service,
            operation: operations(sizes[target.name])[index],
            token: target.token,
            connections,
            settings,
            serverPids: [target.service.child.pid],
            monitor,
            database: target.database,
          });
          if (figures.non2xx + figures.errors > 0) {
            throw new Error(`${operation.name}: ${figures.non2xx + figures.errors} failed`);
          }
          (result.figures[target.name][operation.name] ??= []).push(figures);
          log(
            `  ${operation.name}, ${target.name}: ${figures.requestsPerSecond.toFixed(0)} req/s, ` +
              `p50 ${figures.p50Ms.toFixed(2)} ms, p99 ${figures.p99Ms.toFixed(2)} ms`,
          );
        }
      }
      for (const target of [empty, grown]) {
        const figures = await webhookReceipt(target, receivers);
        (result.figures[target.name]['webhook receipt'] ??= []).push(figures);
        log(
          `  webhook receipt, ${target.name}: ${figures.requestsPerSecond.toFixed(0)}/s, ` +
            `p50 ${figures.p50Ms.toFixed(2)} ms, p99 ${figures.p99Ms.toFixed(2)} ms`,
        );
      }
    }
    result.load.push(load());
    result.sizes = await tableSizes(grown.url);
    results.push(result);
  }
  await Promise.all([empty, grown].map((target) => stopServer(target.service)));
  const report = { date: new Date().toISOString(), machine: await machine(settings.adminUrl) };
  process.stdout.write(`${JSON.stringify({ ...report, connections, results })}\n\n`);
  process.stdout.write(`${table(results)}\n`);
}

/** Each figure's median over the rounds: the empty database's, and the grown one's ratio to it. */
function table(results) {
  const median = (values) => values.sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];
  const keys = ['requestsPerSecond', 'p50Ms', 'p99Ms'];
  const rows = [];
  for (const result of results) {
    for (const [operation, rounds] of Object.entries(result.figures.empty)) {
      const empty = keys.map((key) => median(rounds.map((figures) => figures[key])));
      const grown = keys.map((key) =>
        median(result.figures.grown[operation].map((figures) => figures[key])),
      );
      rows.push([
        result.name,
        operation,
        ...empty.map((value, i) => value.toFixed(i === 0 ? 0 : 2)),
        ...grown.map((value, i) => `${(value / empty[i]).toFixed(2)}x`),
        result.load.join(' → '),
      ]);
    }
  }
  return formatTable(
    [
      'database',
      'operation',
      'empty req/s',
      'p50 ms',
      'p99 ms',
      'ratio req/s',
      'p50',
      'p99',
      'load',
    ],
    rows,
  );
}

async function cleanUp() {
  await Promise.all([...children].map((child) => stopServer({ child })));
  await monitor.end().catch(() => undefined);
  // BENCH_GROWTH_KEEP=1 keeps them, to look at their plans.
  while (created.length > 0 && env.BENCH_GROWTH_KEEP !== '1') {
    await sql(settings.adminUrl, `DROP DATABASE IF EXISTS ${created.pop()} WITH (FORCE)`);
  }
}

await runBench({ main, cleanUp, children });
