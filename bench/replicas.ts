import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { issueToken } from '../test/support/built-service.js';
import { startPgBouncer, type Pooler } from '../test/support/pgbouncer.js';
import { ReplicaSet } from '../test/support/replica-set.js';
import { createTestDatabase, type TestDatabase } from '../test/support/test-database.js';
import { benchSettings, formatTable, machine, measure, seedPlants, summarize } from './measure.mjs';

/**
 * `npm run bench:replicas`: the built service as production runs it (start:prod's flags,
 * no rate limit, warnings only), 1, 2 and 3 replicas behind HAProxy, reaching PostgreSQL
 * directly and through PgBouncer in transaction mode, with the engines and settings of
 * `npm run test:scale`. One replica is also measured without the balancer, for what the
 * hop costs. A benchmark, not a test: it prints a table and writes
 * bench/results/replicas.json (see bench/README.md).
 */
const settings = benchSettings(process.env, { rounds: 1, connections: '64' });
const REPLICA_COUNTS = [1, 2, 3];
const ROUTES = [
  { route: 'direct', pooled: false },
  { route: 'PgBouncer', pooled: true },
];
const RESULTS = join(import.meta.dirname, 'results', 'replicas.json');

type Figures = Awaited<ReturnType<typeof measure>>;
interface Scenario {
  route: string;
  replicas: number;
  balancer: boolean;
  operation: string;
  connections: number;
  figures: Figures;
  rounds: Figures[];
}

let pooler: Pooler;
let database: TestDatabase;
let databaseName: string;
/** A connection to another database, to find the bench database's backends. */
let monitor: pg.Client;

beforeAll(async () => {
  pooler = await startPgBouncer(inject('databaseAdminUrl'));
  database = await createTestDatabase();
  databaseName = new URL(database.url).pathname.slice(1);
  monitor = new pg.Client({ connectionString: inject('databaseAdminUrl') });
  await monitor.connect();
});
afterAll(async () => {
  await monitor?.end();
  await pooler?.stop();
  await database?.drop();
});

it('measures replicas behind the balancer, directly and through PgBouncer', async () => {
  const scenarios: Scenario[] = [];
  let token: string | undefined;
  for (const { route, pooled } of ROUTES) {
    for (const count of REPLICA_COUNTS) {
      const set = await ReplicaSet.start(
        count,
        {
          DATABASE_URL: pooled ? pooler.urlFor(database.url) : database.url,
          ...(pooled ? { DATABASE_DIRECT_URL: database.url } : {}),
          DATABASE_MIGRATION_URL: database.migrationUrl,
          RATE_LIMIT_PER_MINUTE: '0',
          LOG_LEVEL: 'warn',
        },
        { forgetOutput: true, productionFlags: true },
      );
      try {
        if (token === undefined) {
          // The first replicas applied the migrations.
          token = await issueToken(database, 'bench');
          await seedPlants(database.url);
        }
        await expect
          .poll(async () => (await set.balancer.servers()).every(({ status }) => status === 'UP'))
          .toBe(true);
        const pooledPids = pooled ? [pooler.pid] : [];
        const targets = [
          ...(count === 1
            ? [{ balancer: false, url: set.replicas[0].url, enginePids: pooledPids }]
            : []),
          { balancer: true, url: set.balancer.url, enginePids: [set.balancer.pid, ...pooledPids] },
        ];
        for (const { balancer, url, enginePids } of targets) {
          for (const operation of settings.operations) {
            for (const connections of settings.connections) {
              const name = `${route}, ${count} replica(s)${balancer ? ' behind HAProxy' : ''}`;
              const rounds: Figures[] = [];
              for (let round = 0; round < settings.rounds; round++) {
                rounds.push(
                  await measure({
                    target: { name, url },
                    operation,
                    token,
                    connections,
                    settings,
                    serverPids: set.replicas.map(({ service }) => service.pid),
                    enginePids,
                    monitor,
                    database: databaseName,
                  }),
                );
              }
              const figures = summarize(rounds) as Figures;
              scenarios.push({
                route,
                replicas: count,
                balancer,
                operation,
                connections,
                figures,
                rounds,
              });
              console.error(
                `${name}, ${operation} c=${connections}: ${figures.requestsPerSecond.toFixed(0)} req/s, ` +
                  `p99 ${figures.p99Ms.toFixed(1)} ms, steal ${figures.stealPercent.toFixed(0)} %`,
              );
            }
          }
        }
      } finally {
        await set.stop();
      }
    }
  }

  await mkdir(join(import.meta.dirname, 'results'), { recursive: true });
  await writeFile(
    RESULTS,
    `${JSON.stringify(
      {
        date: new Date().toISOString(),
        machine: await machine(inject('databaseAdminUrl')),
        settings,
        scenarios,
      },
      null,
      2,
    )}\n`,
  );
  console.log(table(scenarios));
  // Figures of a run that failed requests would measure the failures.
  expect(scenarios.filter(({ figures }) => figures.non2xx + figures.errors > 0)).toEqual([]);
});

function table(scenarios: Scenario[]): string {
  const header = [
    'route',
    'replicas',
    'scenario',
    'req/s',
    'p50 ms',
    'p99 ms',
    'CPU µs/req replicas',
    'HAProxy, PgBouncer',
    'PG',
    'load generator',
    'busy %',
    'steal %',
  ];
  const rows = scenarios.map(({ route, replicas, balancer, operation, connections, figures }) => [
    route,
    balancer ? `${replicas} behind HAProxy` : `${replicas}, no balancer`,
    `${operation} c=${connections}`,
    figures.requestsPerSecond.toFixed(0),
    figures.p50Ms.toFixed(2),
    figures.p99Ms.toFixed(1),
    figures.serverCpuUsPerRequest.toFixed(0),
    figures.engineCpuUsPerRequest?.toFixed(0) ?? '-',
    figures.databaseCpuUsPerRequest.toFixed(0),
    figures.loadGeneratorCpuUsPerRequest.toFixed(0),
    figures.busyPercent.toFixed(0),
    figures.stealPercent.toFixed(0),
  ]);
  return `${formatTable(header, rows)}\n\nwritten to ${RESULTS}`;
}
