import { readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  freePort,
  send,
  startServiceOnTestDatabase,
  type ServiceOnTestDatabase,
} from '../support/built-service.js';
import { OtlpReceiver } from '../support/otlp-receiver.js';
import { describeOnEmbeddedRun } from '../support/test-database.js';

/** How long the services are kept under load while their collector is away. */
const SOAK_SECONDS = Number(process.env.TRACING_SOAK_SECONDS ?? 60);
/**
 * Until memory settles: a collector that refuses connections leaves the OTLP exporter up
 * to 30 exports (of up to 512 spans each) in its retry loop, which it reaches within
 * about half a minute; from then on it holds no more.
 */
const WARM_UP_SECONDS = 30;
const SAMPLE_EVERY_MS = 3_000;
/** Clients per service: enough to fill the span queue many times over. */
const CLIENTS = 4;
/** Memory may settle higher after warm-up, not keep climbing. */
const RSS_GROWTH_LIMIT_MB = 30;
/** Far above a healthy answer here, far below an export's time-out (10 s). */
const ANSWER_LIMIT_MS = 2_000;

function residentMegabytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((candidate) => candidate.startsWith('VmRSS:'))!;
  return Number(line.split(/\s+/)[1]) / 1024;
}

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

interface Traffic {
  statuses: Map<string, number>;
  slowest: number;
}

/** Creates, reads and probes, in turn, from CLIENTS keep-alive clients until `until`. */
async function drive(started: ServiceOnTestDatabase, firstId: number, until: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  const traffic: Traffic = { statuses: new Map(), slowest: 0 };
  const headers = { authorization: `Bearer ${started.token}` };
  const record = async (label: string, request: Promise<{ status: number }>) => {
    const sentAt = performance.now();
    const { status } = await request;
    traffic.slowest = Math.max(traffic.slowest, performance.now() - sentAt);
    const key = `${label} ${status}`;
    traffic.statuses.set(key, (traffic.statuses.get(key) ?? 0) + 1);
  };
  let nextId = firstId;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (performance.now() < until) {
        const id = nextId++;
        await record(
          'create',
          send(`${started.url}/plants`, {
            method: 'POST',
            agent,
            headers: { ...headers, 'content-type': 'application/json' },
            body: JSON.stringify({ id, name: `Soaked ${id}` }),
          }),
        );
        await record('read', send(`${started.url}/plants/${id}`, { agent, headers }));
        await record('live', send(`${started.url}/health/live`, { agent }));
        await record('ready', send(`${started.url}/health/ready`, { agent }));
      }
    }),
  );
  agent.destroy();
  return traffic;
}

/**
 * A collector that refuses connections, and one that accepts them and never answers: the
 * service, run as the image runs it (production flags), answers exactly as without
 * tracing, and its memory stays bounded (the span queue drops what it cannot hold).
 */
describeOnEmbeddedRun('tracing: a collector that is down or frozen never hurts requests', () => {
  let frozen: OtlpReceiver;
  const services: { name: string; started: ServiceOnTestDatabase }[] = [];

  beforeAll(async () => {
    frozen = await OtlpReceiver.start();
    frozen.answer = () => 'hang';
    const tracing = { OTEL_BSP_SCHEDULE_DELAY: '100', RATE_LIMIT_PER_MINUTE: '0' };
    services.push({
      name: 'refused',
      started: await startServiceOnTestDatabase(
        { ...tracing, OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${await freePort()}` },
        { forgetOutput: 'request lines', productionFlags: true },
      ),
    });
    services.push({
      name: 'frozen',
      started: await startServiceOnTestDatabase(
        { ...tracing, OTEL_EXPORTER_OTLP_ENDPOINT: frozen.endpoint },
        { forgetOutput: 'request lines', productionFlags: true },
      ),
    });
  });

  afterAll(async () => {
    await Promise.all(services.map(({ started }) => started.stop()));
    await frozen?.stop();
  });

  it(
    `answers creates, reads and probes as usual for ${SOAK_SECONDS} s, in bounded memory`,
    async () => {
      const startedAt = performance.now();
      const until = startedAt + SOAK_SECONDS * 1000;
      const samples = services.map(() => [] as { seconds: number; rssMb: number }[]);
      const sampler = setInterval(() => {
        services.forEach(({ started }, index) =>
          samples[index].push({
            seconds: (performance.now() - startedAt) / 1000,
            rssMb: residentMegabytes(started.service.pid),
          }),
        );
      }, SAMPLE_EVERY_MS);
      const traffic = await Promise.all(
        services.map(({ started }, index) => drive(started, index * 10_000_000 + 1, until)),
      );
      clearInterval(sampler);

      services.forEach(({ name }, index) => {
        const { statuses, slowest } = traffic[index];
        const report = Object.fromEntries(statuses);
        for (const key of statuses.keys()) expect(key, name).toMatch(/ 200$/);
        for (const label of ['create', 'read', 'live', 'ready']) {
          expect(report[`${label} 200`], `${name}: ${label}`).toBeGreaterThan(0);
        }
        expect(slowest, `${name}: slowest answer (ms)`).toBeLessThan(ANSWER_LIMIT_MS);

        const settled = samples[index].filter(({ seconds }) => seconds >= WARM_UP_SECONDS);
        const third = Math.max(1, Math.floor(settled.length / 3));
        const growthMb =
          mean(settled.slice(-third).map(({ rssMb }) => rssMb)) -
          mean(settled.slice(0, third).map(({ rssMb }) => rssMb));
        console.log(
          `${name} collector: ${JSON.stringify(report)}, slowest ${Math.round(slowest)} ms, ` +
            `RSS ${settled.map(({ rssMb }) => Math.round(rssMb)).join(' ')} MB (growth ${growthMb.toFixed(1)} MB)`,
        );
        expect(growthMb, `${name}: RSS growth (MB)`).toBeLessThan(RSS_GROWTH_LIMIT_MB);
      });
      expect(frozen.exports.length).toBeGreaterThan(0);
      // Behind a frozen collector the queue fills: the drops are warned about, once.
      const dropWarnings = services[1].started.service
        .logLines()
        .filter(({ msg }) => String(msg).startsWith('the span queue is full'));
      expect(dropWarnings).toHaveLength(1);
    },
    (SOAK_SECONDS + 60) * 1000,
  );
});
