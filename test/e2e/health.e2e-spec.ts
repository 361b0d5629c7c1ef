import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

  it('GET /health/live answers 200 without a token', async () => {
    const response = await api.request({ method: 'GET', url: '/health/live' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok' });
  });

  it('GET /health/ready answers 200 without a token while the database answers', async () => {
    const response = await api.request({ method: 'GET', url: '/health/ready' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      status: 'ok',
      details: { database: { status: 'up' } },
    });
  });

  it('answers 503 in the error shape while the database is unreachable, and 200 once it is back', async () => {
    await api.database.setReachable(false);

    const started = Date.now();
    const ready = await api.request({ method: 'GET', url: '/health/ready' });
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(ready.statusCode).toBe(503);
    expect(ready.headers['content-type']).toMatch(/^application\/json/);
    expect(ready.json()).toEqual({
      error: 503,
      message: 'the database is unavailable; try again shortly',
    });
    expect(ready.headers['retry-after']).toBe('5');

    const write = await createPlant(1);
    expect(write.statusCode).toBe(503);
    expect(write.json()).toEqual({
      error: 503,
      message: 'the database is unavailable; try again shortly',
    });

    const live = await api.request({ method: 'GET', url: '/health/live' });
    expect(live.statusCode).toBe(200);

    await api.database.setReachable(true);
    expect((await api.request({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200);
    expect((await createPlant(2)).statusCode).toBe(200);
  });
});
