import { mkdir, writeFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startServiceOnTestDatabase,
  type ServiceOnTestDatabase,
} from '../support/built-service.js';
import { plantBody, streamPlant } from '../support/plant-stream.js';

/**
 * `npm run soak`: the built service under a steady mixed load for SOAK_MINUTES (5)
 * from SOAK_CLIENTS (8) keep-alive clients, sampling its memory every SOAK_SAMPLE_SECONDS
 * (15). It fails on any 5xx or lost connection, or when the resident memory of the last
 * third of the run averages well above that of the first third after warm-up. The report is
 * printed and written to test/soak/results/.
 */
const MINUTES = Number(process.env.SOAK_MINUTES ?? 5);
const CLIENTS = Number(process.env.SOAK_CLIENTS ?? 8);
const SAMPLE_SECONDS = Number(process.env.SOAK_SAMPLE_SECONDS ?? 15);
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

describe('soak: a steady mixed load for minutes (not in CI)', () => {
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
    const resultsDir = new URL('./results/', import.meta.url);
    await mkdir(resultsDir, { recursive: true });
    await writeFile(
      new URL(`soak-${new Date().toISOString().replaceAll(':', '-')}.md`, resultsDir),
      report,
    );
    process.stdout.write(`${report}\n`);

    expect(problems.slice(0, 20)).toEqual([]);
    expect(rssLastMb - rssSettledMb).toBeLessThan(RSS_GROWTH_LIMIT_MB);
  });
});
