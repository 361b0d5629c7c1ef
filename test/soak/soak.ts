import { mkdir, writeFile } from 'node:fs/promises';
import { Agent } from 'node:http';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  runTokenCli,
  send,
  startServiceOnTestDatabase,
  type ServiceOnTestDatabase,
} from '../support/built-service.js';
import { plantBody, streamPlant } from '../support/plant-stream.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * `npm run soak`: the built service under a steady mixed load for SOAK_MINUTES (5)
 * from SOAK_CLIENTS (8) keep-alive clients, sampling its memory every SOAK_SAMPLE_SECONDS
 * (15). It fails on any 5xx or lost connection, or when the resident memory of the last
 * third of the run averages well above that of the first third after warm-up. The report is
 * printed and written to test/soak/results/.
 *
 * `npm run soak:drift` (SOAK_MODE=drift): issue 41's hour without drift, see the second
 * describe below.
 */
const MODE = process.env.SOAK_MODE ?? 'mixed';
const MINUTES = Number(process.env.SOAK_MINUTES ?? 5);
const CLIENTS = Number(process.env.SOAK_CLIENTS ?? 8);
const SAMPLE_SECONDS = Number(process.env.SOAK_SAMPLE_SECONDS ?? (MODE === 'drift' ? 5 : 15));
/** Memory may settle higher after warm-up, not keep climbing. */
const RSS_GROWTH_LIMIT_MB = 40;

interface Sample {
  seconds: number;
  rssMb: number;
  heapUsedMb: number;
  eventLoopLagP99Ms: number;
  requests: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  serverErrors: number;
  clientFailures: number;
}

/** The value of one metric in Prometheus text, e.g. `process_resident_memory_bytes`. */
function metric(text: string, name: string): number {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `));
  return line === undefined ? Number.NaN : Number(line.split(' ')[1]);
}

function percentile(sorted: number[], fraction: number): number {
  return sorted.length === 0
    ? 0
    : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))];
}

const megabytes = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;
const round1 = (value: number) => Math.round(value * 10) / 10;
/** The p99 of latencies in any order, to a tenth of a millisecond. */
const p99Ms = (latencies: number[]) =>
  round1(
    percentile(
      latencies.toSorted((a, b) => a - b),
      0.99,
    ),
  );

/** Where a report goes, besides stdout. */
async function writeReport(name: string, report: string): Promise<void> {
  const resultsDir = new URL('./results/', import.meta.url);
  await mkdir(resultsDir, { recursive: true });
  await writeFile(
    new URL(`${name}-${new Date().toISOString().replaceAll(':', '-')}.md`, resultsDir),
    report,
  );
  process.stdout.write(`${report}\n`);
}

describe.runIf(MODE === 'mixed')('soak: a steady mixed load for minutes (not in CI)', () => {
  let started: ServiceOnTestDatabase;
  let url: string;
  let token: string;

  beforeAll(async () => {
    started = await startServiceOnTestDatabase(
      { RATE_LIMIT_PER_MINUTE: '0' },
      { forgetOutput: true },
    );
    ({ url, token } = started);
  });
  afterAll(async () => {
    await started.stop();
  });

  it(`keeps memory flat and answers no 5xx for ${MINUTES} minutes`, async () => {
    const statuses = new Map<string, number>();
    const problems: string[] = [];
    let latencies: number[] = [];
    let requests = 0;
    let clientFailures = 0;
    let serverErrors = 0;
    let next = 0;
    /** Ids created and not deleted yet; reads, replaces and deletes pick from these. */
    const live: string[] = [];
    const pick = () => live[Math.floor(Math.random() * live.length)];
    const authorization = { authorization: `Bearer ${token}` };
    const json = { ...authorization, 'content-type': 'application/json' };

    /** One request of the mix: mostly creates and reads, some replaces, deletes and mistakes. */
    const oneRequest = async () => {
      const roll = Math.random();
      if (roll < 0.35 || live.length < 50) {
        const plant = streamPlant(next++);
        const outcome = await call('POST', '/plants', json, plantBody(plant));
        if (outcome.status === 200) live.push(plant.id);
        return { kind: 'create', ...outcome };
      }
      if (roll < 0.6)
        return { kind: 'get', ...(await call('GET', `/plants/${pick()}`, authorization)) };
      if (roll < 0.75) {
        const limit = 1 + Math.floor(Math.random() * 100);
        return { kind: 'list', ...(await call('GET', `/plants?limit=${limit}`, authorization)) };
      }
      if (roll < 0.85) {
        const id = pick();
        return {
          kind: 'replace',
          ...(await call('PUT', `/plants/${id}`, json, '{"name":"Replaced","tag":"soak"}')),
        };
      }
      if (roll < 0.93) {
        const index = Math.floor(Math.random() * live.length);
        const [id] = live.splice(index, 1);
        return { kind: 'delete', ...(await call('DELETE', `/plants/${id}`, authorization)) };
      }
      const mistakes = [
        () => call('POST', '/plants', json, '{"id":1.5,"name":"bad"}'),
        () => call('GET', '/plants/abc', authorization),
        () => call('GET', '/plants', {}),
        () => call('GET', '/no/such/route', authorization),
      ];
      return {
        kind: 'mistake',
        ...(await mistakes[Math.floor(Math.random() * mistakes.length)]()),
      };
    };
    const call = async (
      method: string,
      path: string,
      headers: Record<string, string>,
      body?: string,
    ) => {
      const started = performance.now();
      try {
        const response = await fetch(`${url}${path}`, { method, headers, body });
        await response.arrayBuffer();
        return { status: response.status, ms: performance.now() - started };
      } catch (error) {
        return { status: 0, ms: performance.now() - started, error: (error as Error).message };
      }
    };

    const deadline = Date.now() + MINUTES * 60_000;
    const clients = Array.from({ length: CLIENTS }, async () => {
      while (Date.now() < deadline) {
        const outcome = await oneRequest();
        requests++;
        latencies.push(outcome.ms);
        const key = `${outcome.kind} ${outcome.status}`;
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
        if (outcome.status === 0) {
          clientFailures++;
          problems.push(`${key}: ${'error' in outcome ? outcome.error : ''}`);
        } else if (outcome.status >= 500) {
          serverErrors++;
          problems.push(key);
        }
      }
    });

    const samples: Sample[] = [];
    const started = Date.now();
    let requestsBefore = 0;
    const sampler = (async () => {
      while (Date.now() < deadline) {
        await sleep(Math.min(SAMPLE_SECONDS * 1000, Math.max(0, deadline - Date.now())));
        const metrics = await (await fetch(`${url}/metrics`)).text();
        const sorted = latencies.sort((a, b) => a - b);
        samples.push({
          seconds: Math.round((Date.now() - started) / 1000),
          rssMb: megabytes(metric(metrics, 'process_resident_memory_bytes')),
          heapUsedMb: megabytes(metric(metrics, 'nodejs_heap_size_used_bytes')),
          eventLoopLagP99Ms: Math.round(metric(metrics, 'nodejs_eventloop_lag_p99_seconds') * 1000),
          requests,
          requestsPerSecond: Math.round((requests - requestsBefore) / SAMPLE_SECONDS),
          p50Ms: Math.round(percentile(sorted, 0.5) * 10) / 10,
          p99Ms: Math.round(percentile(sorted, 0.99) * 10) / 10,
          serverErrors,
          clientFailures,
        });
        requestsBefore = requests;
        latencies = [];
        process.stdout.write(`soak ${JSON.stringify(samples.at(-1))}\n`);
      }
    })();
    await Promise.all([...clients, sampler]);

    const third = Math.max(1, Math.floor(samples.length / 3));
    const settled = samples.slice(1, 1 + third);
    const last = samples.slice(-third);
    const averageRss = (of: Sample[]) =>
      Math.round((of.reduce((sum, sample) => sum + sample.rssMb, 0) / of.length) * 10) / 10;
    const rssSettledMb = averageRss(settled);
    const rssLastMb = averageRss(last);
    const report = [
      `# Soak: ${MINUTES} min, ${CLIENTS} keep-alive clients, ${new Date().toISOString()}`,
      '',
      `database: ${process.env.DATABASE_URL ? 'PostgreSQL (DATABASE_URL)' : 'embedded PostgreSQL'}; requests: ${requests}; ` +
        `5xx: ${serverErrors}; failed connections: ${clientFailures}`,
      `RSS after warm-up (average of the first third): ${rssSettledMb} MB; of the last third: ${rssLastMb} MB`,
      '',
      '| s | RSS MB | heap MB | loop lag p99 ms | requests | req/s | p50 ms | p99 ms | 5xx | failed |',
      '|---|---|---|---|---|---|---|---|---|---|',
      ...samples.map(
        (s) =>
          `| ${s.seconds} | ${s.rssMb} | ${s.heapUsedMb} | ${s.eventLoopLagP99Ms} | ${s.requests} | ` +
          `${s.requestsPerSecond} | ${s.p50Ms} | ${s.p99Ms} | ${s.serverErrors} | ${s.clientFailures} |`,
      ),
      '',
      'answers by operation and status:',
      ...[...statuses.entries()].sort().map(([key, count]) => `- ${key}: ${count}`),
      '',
    ].join('\n');
    await writeReport('soak', report);

    expect(problems.slice(0, 20)).toEqual([]);
    expect(rssLastMb - rssSettledMb).toBeLessThan(RSS_GROWTH_LIMIT_MB);
  });
});

/**
 * Issue 41's hour without drift, or its five minutes in CI (SOAK_MINUTES): CREATES_PER_SECOND
 * creates a second and as many reads (a plant by id, a page of the list), open loop, with two
 * subscribers on loopback, deliveries kept RETENTION_MINUTES (a twelfth of the run, at least
 * a minute) and swept every twelfth of that. Warm-up is the first retention window and one
 * autovacuum naptime: from then on the outbox and the deliveries should hold steady, since
 * as many rows leave as come, and the space they leave is reused. Over that measured period
 * it asserts:
 * - each table's size (pg_total_relation_size: indexes and TOAST included) grows over the
 *   period's second half by at most SIZE_GROWTH of its mean there, or SIZE_SLACK_BYTES when
 *   that is more: the growth the least-squares line through that half's samples shows. A
 *   churned table's size is a sawtooth of a vacuum's period, on which two single samples
 *   can differ by a tooth's height (a tenth of the hour's outbox), and a table keeps the
 *   size of its highest occupancy, so it steps up now and then before it levels out: the
 *   line reads the trend through both;
 * - its dead rows (n_dead_tup) stay bounded: their peak in the period's second half is at
 *   most DEAD_ROWS_GROWTH × that of its first half, or a floor of one sweep's rows (a
 *   table with next to nothing dead has nothing to compare);
 * - delivery p99 (a create's 200 to its receipt) in the last WINDOW is at most P99_GROWTH ×
 *   that of the first WINDOW (ten minutes of the hour, one of the five minutes), or
 *   P99_JITTER_MS more when that is more. A window's p99 is the median of its samples'
 *   p99s (one per SAMPLE_SECONDS): a drift moves every sample, while one slow stretch of
 *   a shared machine (a window's p99 went 17.6 → 29 ms on a few seconds at 51 ms) moves
 *   a few. The plain p99 over each window's deliveries is reported beside it;
 * - the service's RSS averaged over the last WINDOW is within RSS_GROWTH of the first's;
 * - no request fails, and every create reaches both subscribers.
 * A server running without autovacuum (CI's: autovacuum = off in its conf.d) would let any
 * table bloat, whatever the service does: there the soak stands in for the launcher, and
 * vacuums each table once a naptime when its dead rows pass autovacuum's threshold, with
 * autovacuum's own cost limit and delay; the report says how often it did. Its naptime
 * scales with the retention, as the run's other periods do: a fifth of the window (the
 * hour's 5 min: the default minute; the five minutes' one: 12 s), or the server's if less.
 * Warm-up ends a naptime after the first retention window: until the first vacuum after
 * the first sweep, the deliveries' space is not reused and the table only grows.
 */
const CREATES_PER_SECOND = 100;
const RETENTION_MINUTES = Math.max(1, Math.round(MINUTES / 12));
const SWEEP_INTERVAL_MS = (RETENTION_MINUTES * 60_000) / 12;
const WINDOW_SECONDS = Math.max(60, (MINUTES * 60) / 6);
const SIZE_GROWTH = 0.1;
/** Eight pages: a table of a few hundred kilobytes moves by that from one vacuum to the next. */
const SIZE_SLACK_BYTES = 64 * 1024;
const DEAD_ROWS_GROWTH = 1.5;
const P99_GROWTH = 1.25;
/**
 * A p99 of a few milliseconds moves by more than a quarter with one collection or one
 * scheduling delay on two shared cores (4.3 then 5.0 ms on a quiet machine), and by more
 * with one slow minute: a five-minute run's window went 6.1 → 12.9 ms (its samples' p99s
 * 10–66 ms for 50 s, at a load average of 1.2–1.7, no backlog, nothing else drifting).
 * A worker falling behind moves it by seconds.
 */
const P99_JITTER_MS = 10;
const RSS_GROWTH = 1.1;
const DRIFT_TABLES = ['webhook_events', 'webhook_deliveries'] as const;
/** SQLSTATE of VACUUM (SKIP_LOCKED)'s warning for a table it could not lock. */
const LOCK_NOT_AVAILABLE = '55P03';
/**
 * Keep-alive connections the load uses at most: a request beyond them queues (its wait
 * counted), where a client falling behind on a busy machine would otherwise open a
 * connection per late request, and spend its time on that.
 */
const DRIFT_CONNECTIONS = 32;

interface TableSample {
  bytes: number;
  live: number;
  dead: number;
  autovacuums: number;
}

interface DriftSample {
  seconds: number;
  rssMb: number;
  heapUsedMb: number;
  loadAverage: number;
  tables: Record<string, TableSample>;
  /** Delivery latencies (ms) received since the sample before. */
  deliveries: number[];
  requests: number;
  failures: number;
}

/** The server's autovacuum settings, which the stand-in follows. */
interface Autovacuum {
  autovacuum: string;
  autovacuum_naptime: string;
  autovacuum_vacuum_threshold: string;
  autovacuum_vacuum_scale_factor: string;
  autovacuum_vacuum_cost_delay: string;
  vacuum_cost_limit: string;
}

/**
 * What autovacuum would do, on a server where it is off, until `until` (performance.now()):
 * once a naptime, VACUUM each table whose dead rows pass the threshold (the table's own
 * autovacuum_vacuum_threshold and _scale_factor where a migration set them). Answers how
 * many times it vacuumed each table. It connects as the tables' owner (`ownerUrl`): for
 * any other role, VACUUM skips the table with a warning and removes nothing, which it
 * takes as a failure rather than count. A table skipped for its lock (SKIP_LOCKED, code
 * 55P03) waits for the next naptime, as autovacuum's would.
 */
async function standInForAutovacuum(
  ownerUrl: string,
  settings: Autovacuum,
  napSeconds: number,
  until: number,
): Promise<Record<string, number>> {
  const vacuums: Record<string, number> = Object.fromEntries(DRIFT_TABLES.map((t) => [t, 0]));
  const client = new pg.Client({ connectionString: ownerUrl });
  const refusals: string[] = [];
  let lockedOut = false;
  client.on('notice', (notice) => {
    if (notice.severity !== 'WARNING') return;
    if (notice.code === LOCK_NOT_AVAILABLE) lockedOut = true;
    else refusals.push(notice.message ?? 'warning');
  });
  await client.connect();
  try {
    await client.query(
      `SET vacuum_cost_delay = ${Number(settings.autovacuum_vacuum_cost_delay)}; ` +
        `SET vacuum_cost_limit = ${Number(settings.vacuum_cost_limit)}`,
    );
    const napMs = napSeconds * 1000;
    while (performance.now() + napMs < until) {
      await sleep(napMs);
      const { rows } = await client.query<{
        relname: string;
        live: string;
        dead: string;
        options: string[] | null;
      }>(
        `SELECT stats.relname, n_live_tup AS live, n_dead_tup AS dead, reloptions AS options
         FROM pg_stat_user_tables AS stats JOIN pg_class ON pg_class.oid = stats.relid
         WHERE stats.relname = ANY($1)`,
        [DRIFT_TABLES],
      );
      for (const { relname, live, dead, options } of rows) {
        const own = Object.fromEntries((options ?? []).map((option) => option.split('=')));
        const threshold =
          Number(own.autovacuum_vacuum_threshold ?? settings.autovacuum_vacuum_threshold) +
          Number(own.autovacuum_vacuum_scale_factor ?? settings.autovacuum_vacuum_scale_factor) *
            Number(live);
        if (Number(dead) <= threshold) continue;
        lockedOut = false;
        await client.query(`VACUUM (SKIP_LOCKED) ${relname}`);
        if (refusals.length > 0) throw new Error(`VACUUM ${relname}: ${refusals.join('; ')}`);
        if (!lockedOut) vacuums[relname]++;
      }
    }
  } finally {
    await client.end();
  }
  return vacuums;
}

describe.runIf(MODE === 'drift')('soak: an hour without drift (issue 41)', () => {
  let started: ServiceOnTestDatabase;
  let receivers: WebhookReceiver[];
  let stats: pg.Client;
  let autovacuum: Autovacuum;

  beforeAll(async () => {
    started = await startServiceOnTestDatabase(
      {
        RATE_LIMIT_PER_MINUTE: '0',
        WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
        WEBHOOK_DELIVERY_RETENTION: `${RETENTION_MINUTES}m`,
        RETENTION_SWEEP_INTERVAL_MS: String(SWEEP_INTERVAL_MS),
      },
      { forgetOutput: true, productionFlags: true },
    );
    const hooks = await runTokenCli(['create', '--name', 'hooks', '--scopes', 'webhooks:manage'], {
      DATABASE_URL: started.database.url,
    });
    expect(hooks.code).toBe(0);
    receivers = [await WebhookReceiver.start(), await WebhookReceiver.start()];
    for (const { url } of receivers) {
      const subscribed = await fetch(`${started.url}/webhooks`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${hooks.stdout.trim()}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ url }),
      });
      expect(subscribed.status).toBe(201);
    }
    stats = new pg.Client({ connectionString: started.database.url });
    await stats.connect();
    // pg_total_relation_size waits for a table's lock: behind a vacuum's truncation, the
    // sample keeps the sizes read before rather than wait.
    await stats.query("SET lock_timeout = '500ms'");
    const { rows } = await stats.query<{ name: keyof Autovacuum; setting: string }>(
      `SELECT name, setting FROM pg_settings WHERE name IN ('autovacuum', 'autovacuum_naptime',
         'autovacuum_vacuum_threshold', 'autovacuum_vacuum_scale_factor',
         'autovacuum_vacuum_cost_delay', 'vacuum_cost_limit')`,
    );
    autovacuum = Object.fromEntries(
      rows.map(({ name, setting }) => [name, setting]),
    ) as unknown as Autovacuum;
  });
  afterAll(async () => {
    await stats?.end();
    for (const receiver of receivers ?? []) await receiver.stop();
    await started?.stop();
  });

  it(`${CREATES_PER_SECOND} creates a second and as many reads for ${MINUTES} min, retention ${RETENTION_MINUTES} min: flat tables, bounded dead rows, steady delivery p99 and RSS, no failure`, async () => {
    const authorization = { authorization: `Bearer ${started.token}` };
    const json = { ...authorization, 'content-type': 'application/json' };
    const problems: string[] = [];
    let requests = 0;
    let failures = 0;
    // FIFO: every connection stays busy; LIFO left one idle past the service's keep-alive
    // time-out, and a request sent on it as the service closed it met a reset.
    const agent = new Agent({ keepAlive: true, maxSockets: DRIFT_CONNECTIONS, scheduling: 'fifo' });
    /** Resolves true once answered 200; any other outcome is a failure, kept in problems. */
    const call = async (
      kind: string,
      path: string,
      options: { method?: string; headers: Record<string, string>; body?: string },
    ) => {
      requests++;
      try {
        const { status } = await send(`${started.url}${path}`, { ...options, agent });
        if (status === 200) return true;
        throw new Error(`status ${status}`);
      } catch (error) {
        failures++;
        const { message, cause } = error as Error & { cause?: { code?: string; message?: string } };
        if (problems.length < 20) {
          problems.push(
            `${Math.round((performance.now() - startedAt) / 1000)} s: ${kind} ${path}: ${message}` +
              (cause ? ` (${cause.code ?? cause.message})` : ''),
          );
        }
        return false;
      }
    };
    /** A create's 200, by plant id, until both subscribers have its delivery. */
    const answeredAt = new Map<number, number>();
    /** Ids answered 200, which reads pick from (a create still under way would be a 404). */
    const readable: number[] = [];
    const receipts = new Map<number, number>();
    /** Receipts whose create had not been answered yet when they were taken in. */
    let early: Array<{ id: number; receivedAt: number }> = [];
    let created = 0;
    const inFlight = new Set<Promise<void>>();
    const track = (work: Promise<void>) => {
      inFlight.add(work);
      void work.finally(() => inFlight.delete(work));
    };

    const startedAt = performance.now();
    const deadline = startedAt + MINUTES * 60_000;
    const autovacuumOn = autovacuum.autovacuum === 'on';
    const naptimeSeconds = autovacuumOn
      ? Number(autovacuum.autovacuum_naptime)
      : Math.min(Number(autovacuum.autovacuum_naptime), (RETENTION_MINUTES * 60) / 5);
    const standIn = autovacuumOn
      ? Promise.resolve(undefined)
      : standInForAutovacuum(started.database.migrationUrl, autovacuum, naptimeSeconds, deadline);
    const load = (async () => {
      for (let index = 0; ; index++) {
        const due = startedAt + (index * 1_000) / (2 * CREATES_PER_SECOND);
        if (due >= deadline) break;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        if (index % 2 === 0) {
          const id = ++created;
          track(
            call('create', '/plants', {
              method: 'POST',
              headers: json,
              body: JSON.stringify({ id, name: `soak ${id}` }),
            }).then((ok) => {
              if (!ok) return;
              answeredAt.set(id, performance.now());
              readable.push(id);
            }),
          );
        } else if (index % 4 === 1 && readable.length > 0) {
          const id = readable[Math.floor(Math.random() * readable.length)];
          track(call('read', `/plants/${id}`, { headers: authorization }).then(() => undefined));
        } else {
          track(call('list', '/plants?limit=20', { headers: authorization }).then(() => undefined));
        }
      }
    })();

    /** Takes in what the receivers got: each delivery's latency from its create's 200. */
    const takeReceipts = (): number[] => {
      const latencies: number[] = [];
      const arrived = [
        ...early,
        ...receivers.flatMap((receiver) =>
          receiver.received.splice(0).map(({ body, receivedAt }) => ({
            id: (JSON.parse(body) as { id: number }).id,
            receivedAt,
          })),
        ),
      ];
      early = [];
      for (const { id, receivedAt } of arrived) {
        const answered = answeredAt.get(id);
        if (answered === undefined) {
          early.push({ id, receivedAt });
          continue;
        }
        latencies.push(receivedAt - answered);
        const count = (receipts.get(id) ?? 0) + 1;
        if (count >= receivers.length) {
          receipts.delete(id);
          answeredAt.delete(id);
        } else {
          receipts.set(id, count);
        }
      }
      return latencies;
    };

    const samples: DriftSample[] = [];
    let tables: Record<string, TableSample> = {};
    const sample = async () => {
      // On a connection of its own: never queued behind the load's.
      const metrics = (await send(`${started.url}/metrics`)).body;
      try {
        const rows = await stats.query<{
          relname: string;
          bytes: string;
          live: string;
          dead: string;
          autovacuums: string;
        }>(
          `SELECT relname, pg_total_relation_size(relid) AS bytes, n_live_tup AS live,
             n_dead_tup AS dead, autovacuum_count AS autovacuums
           FROM pg_stat_user_tables WHERE relname = ANY($1)`,
          [DRIFT_TABLES],
        );
        tables = Object.fromEntries(
          rows.rows.map(({ relname, bytes, live, dead, autovacuums }) => [
            relname,
            {
              bytes: Number(bytes),
              live: Number(live),
              dead: Number(dead),
              autovacuums: Number(autovacuums),
            },
          ]),
        );
      } catch (error) {
        process.stdout.write(`soak: sizes not read, kept: ${(error as Error).message}\n`);
      }
      samples.push({
        seconds: Math.round((performance.now() - startedAt) / 1000),
        rssMb: megabytes(metric(metrics, 'process_resident_memory_bytes')),
        heapUsedMb: megabytes(metric(metrics, 'nodejs_heap_size_used_bytes')),
        loadAverage: loadavg()[0],
        tables,
        deliveries: takeReceipts(),
        requests,
        failures,
      });
      const last = samples.at(-1)!;
      process.stdout.write(
        `soak ${JSON.stringify({
          ...last,
          deliveries: undefined,
          p99Ms: p99Ms(last.deliveries),
        })}\n`,
      );
    };
    while (performance.now() < deadline) {
      await sleep(Math.min(SAMPLE_SECONDS * 1000, Math.max(0, deadline - performance.now())));
      await sample();
    }
    await load;
    await Promise.all(inFlight);
    agent.destroy();
    const vacuumedByTheSoak = await standIn;
    // The deliveries of the last creates: the backlog a second or two, no more.
    const drainedBy = performance.now() + 30_000;
    while ((answeredAt.size > 0 || early.length > 0) && performance.now() < drainedBy) {
      await sleep(200);
      samples.at(-1)!.deliveries.push(...takeReceipts());
    }

    const warmUp = RETENTION_MINUTES * 60 + naptimeSeconds;
    const total = MINUTES * 60;
    const middle = warmUp + (total - warmUp) / 2;
    const measured = samples.filter(({ seconds }) => seconds > warmUp);
    const firstHalf = measured.filter(({ seconds }) => seconds <= middle);
    const secondHalf = measured.filter(({ seconds }) => seconds > middle);
    const atMiddle = firstHalf.at(-1)!;
    const atEnd = samples.at(-1)!;
    const firstWindow = measured.filter(({ seconds }) => seconds <= warmUp + WINDOW_SECONDS);
    const lastWindow = measured.filter(({ seconds }) => seconds > total - WINDOW_SECONDS);
    const p99Of = (of: DriftSample[]) => p99Ms(of.flatMap(({ deliveries }) => deliveries));
    /** The median of the samples' own p99s: a window's typical tail, not its worst seconds. */
    const typicalP99Of = (of: DriftSample[]) =>
      percentile(
        of
          .filter(({ deliveries }) => deliveries.length > 0)
          .map(({ deliveries }) => p99Ms(deliveries))
          .sort((a, b) => a - b),
        0.5,
      );
    const meanRss = (of: DriftSample[]) =>
      round1(of.reduce((sum, { rssMb }) => sum + rssMb, 0) / of.length);
    /** A table's mean size over samples, and its growth across them by least squares. */
    const sizeTrend = (of: DriftSample[], table: string) => {
      const points = of.map(({ seconds, tables }) => [seconds, tables[table]?.bytes ?? 0]);
      const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;
      const [meanSeconds, meanBytes] = [
        mean(points.map(([x]) => x)),
        mean(points.map(([, y]) => y)),
      ];
      const slope =
        points.reduce((sum, [x, y]) => sum + (x - meanSeconds) * (y - meanBytes), 0) /
        points.reduce((sum, [x]) => sum + (x - meanSeconds) ** 2, 0);
      return {
        mean: Math.round(meanBytes),
        growth: Math.round(slope * (points.at(-1)![0] - points[0][0])),
      };
    };
    const peakDead = (of: DriftSample[], table: string) =>
      Math.max(...of.map(({ tables }) => tables[table]?.dead ?? 0));
    /** One sweep's rows of a table at this rate: a floor under the dead-row bound. */
    const sweepRows = (CREATES_PER_SECOND * receivers.length * SWEEP_INTERVAL_MS) / 1000;
    const figures = {
      p99FirstWindowMs: typicalP99Of(firstWindow),
      p99LastWindowMs: typicalP99Of(lastWindow),
      p99OfAllDeliveries: { firstWindowMs: p99Of(firstWindow), lastWindowMs: p99Of(lastWindow) },
      rssFirstWindowMb: meanRss(firstWindow),
      rssLastWindowMb: meanRss(lastWindow),
      tables: Object.fromEntries(
        DRIFT_TABLES.map((table) => {
          const secondHalfSize = sizeTrend(secondHalf, table);
          return [
            table,
            {
              bytesAtWarmUp: measured[0].tables[table]?.bytes,
              bytesAtMiddle: atMiddle.tables[table]?.bytes,
              bytesAtEnd: atEnd.tables[table]?.bytes,
              bytesMeanSecondHalf: secondHalfSize.mean,
              bytesGrowthSecondHalf: secondHalfSize.growth,
              deadPeakFirstHalf: peakDead(firstHalf, table),
              deadPeakSecondHalf: peakDead(secondHalf, table),
              liveAtEnd: atEnd.tables[table]?.live,
              autovacuums: atEnd.tables[table]?.autovacuums,
            },
          ] as const;
        }),
      ),
    };
    const loads = samples.map(({ loadAverage }) => loadAverage);
    const report = [
      `# Soak without drift: ${MINUTES} min, ${new Date().toISOString()}`,
      '',
      `database: ${process.env.DATABASE_URL ? 'PostgreSQL (DATABASE_URL)' : 'embedded PostgreSQL'}; ` +
        `${CREATES_PER_SECOND} creates/s and ${CREATES_PER_SECOND} reads/s, two subscribers, ` +
        `retention ${RETENTION_MINUTES} min, sweep every ${SWEEP_INTERVAL_MS / 1000} s; ` +
        `warm-up ${warmUp} s, windows ${WINDOW_SECONDS} s, middle at ${middle} s`,
      `requests: ${requests}; failed: ${failures}; creates: ${created}; ` +
        `load average (1 min) min ${Math.min(...loads)}, max ${Math.max(...loads)}, ` +
        `mean ${round1(loads.reduce((sum, value) => sum + value, 0) / loads.length)}`,
      vacuumedByTheSoak === undefined
        ? `autovacuum: on (naptime ${autovacuum.autovacuum_naptime} s)`
        : `autovacuum: OFF on this server; the soak stood in for it (naptime ${naptimeSeconds} s), vacuuming ${JSON.stringify(vacuumedByTheSoak)}`,
      '',
      '```json',
      JSON.stringify(figures, null, 2),
      '```',
      '',
      '| s | RSS MB | heap MB | load | events bytes | events dead | deliveries bytes | deliveries live | deliveries dead | delivery p99 ms | requests | failed |',
      '|---|---|---|---|---|---|---|---|---|---|---|---|',
      ...samples.map(
        (s) =>
          `| ${s.seconds} | ${s.rssMb} | ${s.heapUsedMb} | ${s.loadAverage} | ` +
          `${s.tables.webhook_events?.bytes} | ${s.tables.webhook_events?.dead} | ` +
          `${s.tables.webhook_deliveries?.bytes} | ${s.tables.webhook_deliveries?.live} | ` +
          `${s.tables.webhook_deliveries?.dead} | ` +
          `${p99Ms(s.deliveries)} | ` +
          `${s.requests} | ${s.failures} |`,
      ),
      '',
    ].join('\n');
    await writeReport('soak-drift', report);

    expect(problems).toEqual([]);
    expect({ undelivered: answeredAt.size, early: early.length }).toEqual({
      undelivered: 0,
      early: 0,
    });
    for (const table of DRIFT_TABLES) {
      const { bytesMeanSecondHalf, bytesGrowthSecondHalf, deadPeakFirstHalf, deadPeakSecondHalf } =
        figures.tables[table];
      expect(bytesGrowthSecondHalf, `${table}: growth over the second half`).toBeLessThanOrEqual(
        Math.max(SIZE_GROWTH * bytesMeanSecondHalf, SIZE_SLACK_BYTES),
      );
      expect(deadPeakSecondHalf, `${table}: peak of dead rows`).toBeLessThanOrEqual(
        Math.max(DEAD_ROWS_GROWTH * deadPeakFirstHalf, sweepRows),
      );
    }
    expect(figures.p99LastWindowMs).toBeLessThanOrEqual(
      Math.max(P99_GROWTH * figures.p99FirstWindowMs, figures.p99FirstWindowMs + P99_JITTER_MS),
    );
    expect(figures.rssLastWindowMb).toBeLessThanOrEqual(RSS_GROWTH * figures.rssFirstWindowMb);
  });
});
