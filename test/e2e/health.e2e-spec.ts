import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECKOUT_REVISION, PACKAGE_VERSION } from '../support/release.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

describe('health', () => {
  let api: TestApp;
  let token: string;

  beforeAll(async () => {
    api = await createTestApp();
    token = await api.issueToken();
  });
  afterAll(async () => {
    await api.database.setReachable(true);
    await api.close();
  });

  const createPlant = (id: number) =>
    api.request({
      method: 'POST',
      url: '/plants',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ id, name: 'Aloe' }),
    });

  /** `health_ready`, the readiness the alerts read (deploy/monitoring). */
  const readyGauge = async () => {
    const { body } = await api.request({ method: 'GET', url: '/metrics' });
    return /^health_ready (\d)$/m.exec(body)?.[1];
  };

  /** Which release answers (build-info.e2e-spec.ts: a revision set as the image sets it). */
  const release = { version: PACKAGE_VERSION, revision: expect.stringMatching(CHECKOUT_REVISION) };

  it('GET /health/live answers 200 without a token, naming the release', async () => {
    const response = await api.request({ method: 'GET', url: '/health/live' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok', ...release });
  });

  it('GET /health/ready answers 200 without a token while the database answers, naming the release (health_ready 1)', async () => {
    const response = await api.request({ method: 'GET', url: '/health/ready' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      status: 'ok',
      ...release,
      details: { database: { status: 'up' } },
    });
    expect(await readyGauge()).toBe('1');
  });

  it('shares one database check between the probes of a second (see readiness.spec.ts)', async () => {
    const probes = await Promise.all(
      Array.from({ length: 20 }, () => api.request({ method: 'GET', url: '/health/ready' })),
    );
    expect(probes.map((probe) => probe.statusCode)).toEqual(probes.map(() => 200));
    // One check: the same report, down to the database's response time, for every probe.
    expect(new Set(probes.map((probe) => probe.body)).size).toBe(1);
    expect(probes[0].json()).toMatchObject({
      status: 'ok',
      details: { database: { status: 'up' } },
    });
  });

  it('answers 503 in the error shape within 3 s of the database becoming unreachable (health_ready 0), and 200 once it is back (health_ready 1)', async () => {
    await api.database.setReachable(false);

    const started = Date.now();
    let ready = await api.request({ method: 'GET', url: '/health/ready' });
    while (ready.statusCode === 200 && Date.now() - started < 3_000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      ready = await api.request({ method: 'GET', url: '/health/ready' });
    }
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(ready.statusCode).toBe(503);
    expect(ready.headers['content-type']).toMatch(/^application\/json/);
    expect(ready.json()).toEqual({
      error: 503,
      message: 'the database is unavailable; try again shortly',
    });
    expect(ready.headers['retry-after']).toBe('5');
    expect(await readyGauge()).toBe('0');

    const write = await createPlant(1);
    expect(write.statusCode).toBe(503);
    expect(write.json()).toEqual({
      error: 503,
      message: 'the database is unavailable; try again shortly',
    });

    const live = await api.request({ method: 'GET', url: '/health/live' });
    expect(live.statusCode).toBe(200);

    await api.database.setReachable(true);
    await expect
      .poll(async () => (await api.request({ method: 'GET', url: '/health/ready' })).statusCode, {
        timeout: 3_000,
      })
      .toBe(200);
    expect(await readyGauge()).toBe('1');
    expect((await createPlant(2)).statusCode).toBe(200);
  });
});
