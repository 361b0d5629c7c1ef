import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { REPEAT_WINDOW_MS } from '../../src/shutdown/shutdown-signals.js';
import {
  createOnNewConnection,
  issueToken,
  send,
  type ServiceProcess,
  startService,
  startServiceOnTestDatabase,
  type ServiceOnTestDatabase,
} from '../support/built-service.js';
import {
  createTestDatabase,
  type TestDatabase,
  describeOnEmbeddedRun,
} from '../support/test-database.js';

// How the service stops, not how the database does: the embedded run covers it
// (describeOnEmbeddedRun).
describeOnEmbeddedRun('graceful shutdown (the built service)', () => {
  let started: ServiceOnTestDatabase;
  let database: TestDatabase;
  let service: ServiceProcess;
  let url: string;
  let token: string;
  let lock: pg.Client;

  beforeEach(async () => {
    started = await startServiceOnTestDatabase();
    ({ database, service, url, token } = started);
    lock = new pg.Client({ connectionString: database.adminUrl });
    await lock.connect();
  });
  afterEach(async () => {
    await lock.end();
    await started.stop();
  });

  /** Creates a plant; resolves with "<status> <Connection header>" or the client's error. */
  const create = (id: number) =>
    send(`${url}/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id, name: `plant ${id}` }),
    }).then(
      (answer) => `${answer.status} ${answer.headers.connection}`,
      (error: Error) => error.message,
    );

  /** Inserts wait behind this lock until `releaseInserts()`: they stay in flight. */
  const holdInserts = async () => {
    await lock.query('BEGIN');
    await lock.query('LOCK TABLE plants IN ACCESS EXCLUSIVE MODE');
  };
  const releaseInserts = () => lock.query('ROLLBACK');
  const insertsWaiting = async () => {
    const [{ count }] = await database.query<{ count: string }>(
      `SELECT count(*) FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    return Number(count);
  };
  const logged = (pattern: RegExp) =>
    service.logLines().some((line) => pattern.test(String(line.msg)));

  it('on SIGTERM finishes the requests in flight and those connecting, then exits 0', async () => {
    await holdInserts();
    const inFlight = Array.from({ length: 20 }, (_, i) => create(i + 1));
    // Group commit keeps two insert statements in flight: both wait on the lock, and the
    // other creates wait in the service to share the next statement.
    await expect.poll(insertsWaiting).toBe(2);

    service.signal('SIGTERM');
    const connecting = Array.from({ length: 30 }, (_, i) => create(i + 101));
    await expect.poll(() => logged(/^SIGTERM: finishing/)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await releaseInserts();

    // Each answered, and told to close its connection (it could not be reused).
    expect(await Promise.all([...inFlight, ...connecting])).toEqual(
      Array.from({ length: 50 }, () => '200 close'),
    );
    expect(await service.exited).toEqual({ code: 0, signal: null });
    expect(logged(/^stopped$/)).toBe(true);
    expect(await database.query('SELECT count(*)::int AS count FROM plants')).toEqual([
      { count: 50 },
    ]);
    await expect(send(`${url}/health/live`)).rejects.toThrow(/ECONNREFUSED/);
  });

  it('exits at once on a second signal, without waiting for requests in flight; a repeat of the first at once is the same stop', async () => {
    await holdInserts();
    const stuck = create(7);
    await expect.poll(insertsWaiting).toBe(1);
    service.signal('SIGTERM');
    await expect.poll(() => logged(/^SIGTERM: finishing/), { interval: 5 }).toBe(true);
    // As when Ctrl-C reaches npm and the service, and npm passes its copy on.
    service.signal('SIGTERM');
    await expect.poll(() => logged(/^SIGTERM again within \d+ ms: the same stop$/)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, REPEAT_WINDOW_MS));
    const second = Date.now();
    service.signal('SIGTERM');
    expect(await service.exited).toEqual({ code: 143, signal: null });
    expect(Date.now() - second).toBeLessThan(1_000);
    expect(await stuck).toMatch(/socket hang up|ECONNRESET/);
    await releaseInserts();
  });
});

describeOnEmbeddedRun('a stop answers every request it received (the built service, cold)', () => {
  const RUNS = 20;
  const CREATES = 50;
  let database: TestDatabase;
  let token: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    // Migrated once, so that each run's start is the service's own, not the migrations'.
    token = await issueToken(database);
  });
  afterAll(() => database?.drop());

  it(
    `${RUNS} times: ${CREATES} creates on new connections, SIGTERM once all are written; each is answered, each 200 stored, exit 0`,
    { timeout: 180_000 },
    async () => {
      const problems: string[] = [];
      for (let run = 0; run < RUNS; run++) {
        // A service just started: its first requests run cold code and look the token up.
        const { service, url } = await startService({
          ...database.env,
          SHUTDOWN_DELAY_MS: '0',
        });
        // Every other run, the service is descheduled as a CPU quota does it: stopped while
        // the creates are sent, so that all of them wait in the kernel, and stopped again
        // once it has begun to stop, for longer than any of the drain's timers.
        const starved = run % 2 === 1;
        try {
          const ids = Array.from({ length: CREATES }, (_, index) => run * CREATES + index + 1);
          if (starved) service.signal('SIGSTOP');
          const creates = ids.map((id) => createOnNewConnection(url, token, id));
          await Promise.all(creates.map(({ sent }) => sent));
          service.signal('SIGTERM');
          if (starved) {
            service.signal('SIGCONT');
            await expect
              .poll(() => service.output.stdout.includes('SIGTERM: finishing'), {
                interval: 5,
                timeout: 10_000,
              })
              .toBe(true);
            service.signal('SIGSTOP');
            await new Promise((resolve) => setTimeout(resolve, 400));
            service.signal('SIGCONT');
          }
          const answers = await Promise.all(creates.map(({ answer }) => answer));
          const exit = await service.exited;

          const created: number[] = [];
          answers.forEach((answer, index) => {
            if (answer instanceof Error) {
              problems.push(`run ${run}, id ${ids[index]}: ${answer.message}`);
            } else if (answer.status === 200) {
              created.push(ids[index]);
            } else if (
              answer.status !== 503 ||
              answer.headers.connection !== 'close' ||
              JSON.parse(answer.body).error !== 503
            ) {
              problems.push(`run ${run}, id ${ids[index]}: ${answer.status} ${answer.body}`);
            }
          });
          const stored = await database.query<{ id: string }>(
            `SELECT id FROM plants WHERE id = ANY('{${created.join(',')}}'::bigint[])`,
          );
          if (stored.length !== created.length) {
            problems.push(`run ${run}: ${created.length} answered 200, ${stored.length} stored`);
          }
          if (exit.code !== 0) problems.push(`run ${run}: exit ${JSON.stringify(exit)}`);
        } finally {
          await service.stop();
        }
      }
      expect(problems).toEqual([]);
    },
  );
});

describeOnEmbeddedRun('graceful shutdown with the embedded PostgreSQL', () => {
  it('stops the PostgreSQL it started, cleanly, and exits 0', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'plant-store-shutdown-'));
    try {
      const { service, url } = await startService({ DATA_DIR: dataDir });
      try {
        expect((await send(`${url}/health/ready`)).status).toBe(200);
        const pidFile = join(dataDir, 'postgres', 'postmaster.pid');
        expect(existsSync(pidFile)).toBe(true);
        service.signal('SIGTERM');
        expect(await service.exited).toEqual({ code: 0, signal: null });
        expect(existsSync(pidFile)).toBe(false);
      } finally {
        await service.stop();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describeOnEmbeddedRun('rolling updates (the built service, SHUTDOWN_DELAY_MS)', () => {
  const DELAY_MS = 2_000;
  let started: ServiceOnTestDatabase;

  beforeEach(async () => {
    started = await startServiceOnTestDatabase({ SHUTDOWN_DELAY_MS: String(DELAY_MS) });
  });
  afterEach(() => started.stop());

  it('on SIGTERM first fails readiness while still serving, then stops accepting and exits 0', async () => {
    const { service, url, token } = started;
    expect((await send(`${url}/health/ready`)).status).toBe(200);
    const signalled = Date.now();
    service.signal('SIGTERM');
    await expect
      .poll(async () => (await send(`${url}/health/ready`)).status, { interval: 50 })
      .toBe(503);
    const notReady = await send(`${url}/health/ready`);
    expect(JSON.parse(notReady.body)).toEqual({
      error: 503,
      message: 'the service is shutting down',
    });

    // A balancer that has not noticed yet still gets answers, on new connections too.
    const created = await send(`${url}/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{"id": 1, "name": "Fern"}',
    });
    expect([created.status, created.headers.connection]).toEqual([200, 'close']);
    expect(Date.now() - signalled).toBeLessThan(DELAY_MS);

    expect(await service.exited).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalled).toBeGreaterThanOrEqual(DELAY_MS);
  });
});
