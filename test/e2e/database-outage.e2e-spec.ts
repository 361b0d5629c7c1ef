import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { EmbeddedPostgresServer } from '../../src/database/embedded-postgres.js';
import {
  type Answer,
  issueToken,
  send,
  type ServiceProcess,
  startService,
} from '../support/built-service.js';
import { clusterProcesses } from '../support/embedded-server.js';
import {
  acknowledged,
  asSentPlants,
  type CreateOutcome,
  streamCreates,
} from '../support/plant-stream.js';
import {
  onDatabaseServerRun,
  createTestDatabase,
  type TestDatabase,
} from '../support/test-database.js';

/** Generous bounds: two cores, shared with other test runs. */
const ANSWER_WITHIN_MS = 10_000;
const RECOVER_WITHIN_MS = 10_000;
const READY_WITHIN_MS = 3_000;
const UNAVAILABLE = { error: 503, message: 'the database is unavailable; try again shortly' };

interface OutageReport {
  outcomes: CreateOutcome[];
  /** What /health/ready answered while the database was away. */
  readyDuringOutage: { status: number; body: string; ms: number };
  liveDuringOutage: number;
  /** From the database's return to the first create answered 200 again. */
  recoveryMs: number;
}

/**
 * Runs a steady load of creates (a few clients, each pausing a little between requests)
 * against the service, takes the database away once the load is flowing, keeps it away
 * for `outageMs`, brings it back, and goes on until creates succeed again.
 */
async function outageUnderLoad(
  url: string,
  token: string,
  outage: { takeAway: () => Promise<void>; bringBack: () => Promise<void>; outageMs: number },
): Promise<OutageReport> {
  let stopping = false;
  let acknowledgedCount = 0;
  let backAt: number | undefined;
  let recoveredAt: number | undefined;
  const load = streamCreates(url, token, {
    workers: 6,
    first: 0,
    pauseMs: 20,
    done: () => stopping,
    observe: (outcome) => {
      if (outcome.status !== 200) return;
      acknowledgedCount++;
      if (backAt !== undefined && recoveredAt === undefined) recoveredAt = Date.now();
    },
  });
  try {
    await expect.poll(() => acknowledgedCount, { timeout: 10_000 }).toBeGreaterThan(20);
    const awayAt = Date.now();
    await outage.takeAway();
    let ready: Answer & { ms: number };
    do {
      const asked = Date.now();
      ready = { ...(await send(`${url}/health/ready`)), ms: Date.now() - asked };
    } while (ready.status === 200 && Date.now() < awayAt + ANSWER_WITHIN_MS);
    const live = await send(`${url}/health/live`);
    await sleep(Math.max(0, awayAt + outage.outageMs - Date.now()));

    await outage.bringBack();
    backAt = Date.now();
    await expect.poll(() => recoveredAt, { timeout: RECOVER_WITHIN_MS }).toBeDefined();
    // A little more load on the recovered database.
    await sleep(1_000);
    return {
      outcomes: await stopLoad(),
      readyDuringOutage: ready,
      liveDuringOutage: live.status,
      recoveryMs: recoveredAt! - backAt,
    };
  } finally {
    await stopLoad();
  }

  function stopLoad() {
    stopping = true;
    return load;
  }
}

/** Every create was answered, in time, 200 or 503 in the error shape; none hung or failed otherwise. */
function expectOnly200Or503InTime({ outcomes }: OutageReport) {
  expect(outcomes.filter((outcome) => outcome.error !== undefined)).toEqual([]);
  expect(outcomes.filter((outcome) => outcome.status !== 200 && outcome.status !== 503)).toEqual(
    [],
  );
  const unavailable = outcomes.filter((outcome) => outcome.status === 503);
  expect(unavailable.length).toBeGreaterThan(0);
  for (const { body } of unavailable) expect(JSON.parse(body!)).toEqual(UNAVAILABLE);
  expect(Math.max(...outcomes.map((outcome) => outcome.ms))).toBeLessThan(ANSWER_WITHIN_MS);
}

function expectReadinessFollowed(report: OutageReport) {
  expect(report.readyDuringOutage.status).toBe(503);
  // Its own time-out is 1 s: a probe must not wait on a stuck database.
  expect(report.readyDuringOutage.ms).toBeLessThan(READY_WITHIN_MS);
  expect(JSON.parse(report.readyDuringOutage.body)).toEqual(UNAVAILABLE);
  expect(report.liveDuringOutage).toBe(200);
  expect(report.recoveryMs).toBeLessThan(RECOVER_WITHIN_MS);
}

/** Every plant answered 200 is stored exactly as sent. */
async function expectAcknowledgedStored({ outcomes }: OutageReport, databaseUrl: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query('SELECT id::text, name, tag FROM plants');
    const stored = new Set(asSentPlants(rows).map((plant) => JSON.stringify(plant)));
    const missing = acknowledged(outcomes).filter((plant) => !stored.has(JSON.stringify(plant)));
    expect(missing).toEqual([]);
  } finally {
    await client.end();
  }
}

describe('a database outage under steady load (the built service)', () => {
  let service: ServiceProcess;
  let cleanUp: () => Promise<void>;
  afterEach(async () => {
    // SIGTERM, so that a service on its embedded PostgreSQL stops that too.
    service.signal('SIGTERM');
    await service.exited;
    await cleanUp();
  });

  it('database refusing connections and ending sessions: 503 at once, ready 503, then recovery by itself', async () => {
    const database: TestDatabase = await createTestDatabase();
    cleanUp = async () => {
      await database.setReachable(true);
      await database.drop();
    };
    let url: string;
    ({ service, url } = await startService({ ...database.env }));
    const token = await issueToken(database);

    const report = await outageUnderLoad(url, token, {
      takeAway: () => database.setReachable(false),
      bringBack: () => database.setReachable(true),
      outageMs: 3_000,
    });

    expectOnly200Or503InTime(report);
    expectReadinessFollowed(report);
    await expectAcknowledgedStored(report, database.url);
    expect(service.output.stderr).toBe('');
  });

  // Freezing needs the server's processes: the embedded run's own.
  it.skipIf(onDatabaseServerRun)(
    'embedded PostgreSQL frozen (SIGSTOP): 503 within the time-outs, ready 503, then recovery once it thaws',
    async () => {
      const dataDir = await mkdtemp(join(tmpdir(), 'plant-store-outage-'));
      cleanUp = () => rm(dataDir, { recursive: true, force: true });
      let url: string;
      ({ service, url } = await startService({ DATA_DIR: dataDir }));
      // Joined and left at once, as the token CLI does: the service keeps it running.
      const guest = await EmbeddedPostgresServer.open(dataDir, { log: () => undefined });
      await guest.close();
      const databaseUrl = guest.url;
      const token = await issueToken(databaseUrl);

      let frozen: number[] = [];
      const thaw = async () => {
        for (const pid of frozen) signalIfAlive(pid, 'SIGCONT');
      };
      try {
        const report = await outageUnderLoad(url, token, {
          takeAway: async () => {
            frozen = clusterProcesses(dataDir);
            for (const pid of frozen) signalIfAlive(pid, 'SIGSTOP');
          },
          bringBack: thaw,
          // Longer than the client's query time-out (6 s): statements sent before the
          // freeze fail too.
          outageMs: 8_000,
        });

        expectOnly200Or503InTime(report);
        expectReadinessFollowed(report);
        await expectAcknowledgedStored(report, databaseUrl);
      } finally {
        await thaw();
      }
    },
    60_000,
  );
});

/** A server process listed a moment ago may have exited since (a backend whose client left). */
function signalIfAlive(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}
