import { Logger } from '@nestjs/common';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { expectError, plantsClient, type PlantsClient } from '../support/plants-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/** What the issue asks: creates answer 200 again within this of the database taking writes. */
const RECOVER_WITHIN_MS = 5_000;
const UNAVAILABLE = /^the database is unavailable; try again shortly$/;

/**
 * What a demoted primary or a standby behind a moved endpoint looks like to the service:
 * a server whose sessions take no writes. Only the test's own database is set read-only,
 * and its sessions are ended, so the pool's next connections meet it.
 */
describe('a database that takes no writes, then takes them again (no restart)', () => {
  let api: TestApp;
  let client: PlantsClient;
  let warn: ReturnType<typeof vi.spyOn>;
  let log: ReturnType<typeof vi.spyOn>;

  /** For new sessions, the test's own: a read-only session may still write in READ WRITE. */
  const setReadOnly = async (readOnly: boolean) => {
    const change = readOnly
      ? 'SET default_transaction_read_only = on'
      : 'RESET default_transaction_read_only';
    await api.database.query(
      `BEGIN READ WRITE; DO $$ BEGIN EXECUTE format('ALTER DATABASE %I ${change}', current_database()); END $$; COMMIT`,
    );
  };
  const acceptsWritesGauge = async () => {
    const metrics = (await api.request({ url: '/metrics', remoteAddress: '192.0.2.9' })).body;
    return /^db_accepts_writes (\d)$/m.exec(metrics)?.[1];
  };
  const readiness = async () => {
    const response = await api.request({ url: '/health/ready', remoteAddress: '192.0.2.9' });
    return {
      status: response.statusCode,
      database: response.json<{ details: { database: unknown } }>().details.database,
    };
  };

  beforeAll(async () => {
    warn = vi.spyOn(Logger.prototype, 'warn');
    log = vi.spyOn(Logger.prototype, 'log');
    api = await createTestApp();
    client = plantsClient(api, await api.issueToken());
    for (const id of [1, 2])
      expect((await client.create({ id, name: 'Fern' })).statusCode).toBe(200);
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await api.close();
  });

  it('takes writes to begin with', async () => {
    expect(await acceptsWritesGauge()).toBe('1');
    expect(await readiness()).toMatchObject({
      status: 200,
      database: { status: 'up', writes: 'accepted' },
    });
  });

  it('answers writes 503 with Retry-After, serves reads, and says so', async () => {
    await setReadOnly(true);
    // Existing sessions keep their settings: end them, as a failover ends the old primary's.
    await api.database.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
    // Ended sessions are seen by their connections a moment later: reads may fail once.
    await expect.poll(async () => (await client.get(1)).statusCode, { timeout: 5_000 }).toBe(200);

    for (const write of [
      () => client.create({ id: 3, name: 'Moss' }),
      () => client.replace(1, { name: 'Ivy' }),
      () => client.delete(2),
    ]) {
      const response = await write();
      expectError(response, 503, UNAVAILABLE);
      expect(response.headers['retry-after']).toBe('5');
    }
    expect((await client.get(1)).json()).toEqual({ id: 1, name: 'Fern' });
    expect((await client.list()).statusCode).toBe(200);

    expect(await acceptsWritesGauge()).toBe('0');
    expect(await readiness()).toMatchObject({
      status: 200,
      database: { status: 'up', writes: 'refused' },
    });
    const refusals = warn.mock.calls.filter(([message]) => /refuses writes/.test(String(message)));
    expect(refusals).toHaveLength(1);
  });

  it(`answers creates 200 again within ${RECOVER_WITHIN_MS / 1000} s of the database taking writes`, async () => {
    await setReadOnly(false);
    const since = Date.now();
    let created: number | undefined;
    while (created !== 200 && Date.now() - since < RECOVER_WITHIN_MS) {
      const response = await client.create({ id: 3, name: 'Moss' });
      created = response.statusCode;
      // Meanwhile, only the 'not now' answer: never a 500.
      if (created !== 200) expectError(response, 503, UNAVAILABLE);
    }
    expect(created).toBe(200);
    expect((await client.delete(2)).statusCode).toBe(204);

    expect(await acceptsWritesGauge()).toBe('1');
    expect(await readiness()).toMatchObject({
      status: 200,
      database: { status: 'up', writes: 'accepted' },
    });
    const takenAgain = log.mock.calls.filter(([message]) =>
      /takes writes again/.test(String(message)),
    );
    expect(takenAgain).toHaveLength(1);
  });
});
