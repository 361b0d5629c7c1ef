import { execFile } from 'node:child_process';
import { Agent } from 'node:http';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  send,
  type ServiceOnTestDatabase,
  startServiceOnTestDatabase,
} from '../support/built-service.js';
import {
  type CreateOutcome,
  plantBody,
  streamCreates,
  streamPlant,
} from '../support/plant-stream.js';
import { percentile } from '../support/percentile.js';
import { describeOnEmbeddedRun } from '../support/test-database.js';

/** The figure is 30 s; FLOOD_SECONDS shortens it for a local run. */
const FLOOD_SECONDS = Number(process.env.FLOOD_SECONDS ?? 30);
const FLOOD_CONNECTIONS = 200;
/**
 * Issue 10's bound, on two cores shared with the flood. It holds because anonymous
 * requests wait in a queue served 16 per event-loop turn (AnonymousRequestQueue): without
 * it each turn served the flood's 400 connections first and the p99 was 200–330 ms here;
 * with it, 56–68 ms (docs/guarantees.md).
 */
const CREATE_P99_LIMIT_MS = 250;
/** A create answered later than this has, to its client, timed out. */
const CREATE_TIMEOUT_MS = 3_000;
const FLOOD_SCRIPT = fileURLToPath(new URL('../support/anonymous-flood.mjs', import.meta.url));

interface FloodReport {
  requests: number;
  statuses: Record<string, number>;
  errors: number;
  timeouts: number;
}

/**
 * The flood, from a process of its own (see anonymous-flood.mjs): as from other hosts,
 * it does not share this process's event loop with the client being measured.
 */
async function flood(url: string): Promise<{ unknownTokens: FloodReport; readiness: FloodReport }> {
  const { stdout } = await promisify(execFile)(process.execPath, [
    FLOOD_SCRIPT,
    url,
    String(FLOOD_CONNECTIONS),
    String(FLOOD_SECONDS),
  ]);
  return JSON.parse(stdout);
}

// The anonymous queue's fairness, not the database's: the embedded run covers it.
describeOnEmbeddedRun('an anonymous flood (the built service)', () => {
  let service: ServiceOnTestDatabase;

  beforeAll(async () => {
    // The flood and the client share 127.0.0.1: a per-address limit would refuse the
    // client too (see rate-limit.e2e-spec.ts); here the token caches alone protect the pool.
    service = await startServiceOnTestDatabase(
      { RATE_LIMIT_PER_MINUTE: '0' },
      { forgetOutput: true },
    );
  });
  afterAll(() => service.stop());

  it(
    `does not starve a client with a valid token: ${FLOOD_CONNECTIONS} connections of unknown tokens and ${FLOOD_CONNECTIONS} polling /health/ready for ${FLOOD_SECONDS} s`,
    async () => {
      // A real client keeps its connection open. A new connection per request would wait
      // for accept() behind the flood's: on Node 20 the busy service accepts one
      // connection per event-loop turn (~50 ms here), so seconds at the flood's start.
      // Already at work before the flood, its token was verified then.
      const agent = new Agent({ keepAlive: true });
      const before = await send(`${service.url}/plants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${service.token}`, 'content-type': 'application/json' },
        body: plantBody(streamPlant(-1)),
        agent,
      });
      expect(before.status).toBe(200);
      // The figures depend on what else the two cores run: the report says how busy they were.
      const loadBefore = loadavg()[0];
      let flooding = true;
      const flooded = flood(service.url).finally(() => (flooding = false));
      const creates: Promise<CreateOutcome[]> = streamCreates(service.url, service.token, {
        workers: 2,
        first: 0,
        pauseMs: 20,
        agent,
        done: () => !flooding,
      });
      const [{ unknownTokens, readiness }, outcomes] = await Promise.all([flooded, creates]);
      agent.destroy();
      const latencies = outcomes.map((outcome) => outcome.ms);
      const p99 = percentile(latencies, 0.99);
      const maxMs = Math.max(...latencies);
      console.info(
        JSON.stringify({
          seconds: FLOOD_SECONDS,
          loadAverage: { before: loadBefore, after: loadavg()[0] },
          creates: outcomes.length,
          createP50Ms: Math.round(percentile(latencies, 0.5)),
          createP99Ms: Math.round(p99),
          createMaxMs: Math.round(maxMs),
          unknownTokens,
          readiness,
        }),
      );

      expect(outcomes.filter((outcome) => outcome.status !== 200)).toEqual([]);
      // The creates went on for the whole flood: none waited long enough to time out.
      expect(maxMs).toBeLessThan(CREATE_TIMEOUT_MS);
      expect(p99).toBeLessThan(CREATE_P99_LIMIT_MS);
      // The flood itself was answered, without a 5xx: 401 for the tokens, 200 for the probes.
      expect(Object.keys(unknownTokens.statuses)).toEqual(['401']);
      expect(Object.keys(readiness.statuses)).toEqual(['200']);
    },
    (FLOOD_SECONDS + 60) * 1_000,
  );
});
