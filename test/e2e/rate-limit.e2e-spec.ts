import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_DOCS_PATHS } from '../../src/openapi/serve-api-docs.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/** A 429 for a limit of 3 a minute: the error shape, and Retry-After within the minute. */
function expectLimited(response: LightMyRequestResponse, what?: string): void {
  expect(response.statusCode, what).toBe(429);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  const retryAfter = Number(response.headers['retry-after']);
  expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
  expect(response.json()).toEqual({
    error: 429,
    message: `too many requests: the limit is 3 a minute; retry in ${retryAfter} s`,
  });
}

describe('rate limits', () => {
  describe('RATE_LIMIT_PER_MINUTE=3', () => {
    let api: TestApp;
    let first: string;
    let second: string;
    let nextId = 1;

    beforeAll(async () => {
      api = await createTestApp({ RATE_LIMIT_PER_MINUTE: '3' });
      first = await api.issueToken();
      second = await api.issueToken();
    });
    afterAll(() => api.close());

    const create = (token: string) =>
      api.request({
        method: 'POST',
        url: '/plants',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ id: nextId++, name: 'Limited' }),
      });

    it('answers 429 in the error shape with Retry-After once a token used its minute', async () => {
      for (let i = 0; i < 3; i++) {
        const response = await create(first);
        expect(response.statusCode).toBe(200);
        expect(response.headers['x-ratelimit-limit']).toBe('3');
        expect(response.headers['x-ratelimit-remaining']).toBe(String(2 - i));
      }
      const limited = await create(first);
      expectLimited(limited);
      expect(limited.body).not.toMatch(/throttl/i);
    });

    it('counts each token on its own', async () => {
      expect((await create(second)).statusCode).toBe(200);
    });

    it('counts requests without a token by client address', async () => {
      const scrapes = [];
      for (let i = 0; i < 4; i++) {
        scrapes.push((await api.request({ method: 'GET', url: '/metrics' })).statusCode);
      }
      expect(scrapes).toEqual([200, 200, 200, 429]);
    });

    it('ignores X-Forwarded-For: without TRUST_PROXY anyone could write it', async () => {
      const statuses = [];
      for (const forwarded of ['203.0.113.1', '203.0.113.2', '203.0.113.3', '203.0.113.4']) {
        const response = await api.request({
          method: 'GET',
          url: '/metrics',
          remoteAddress: '192.0.2.60',
          headers: { 'x-forwarded-for': forwarded },
        });
        statuses.push(response.statusCode);
      }
      expect(statuses).toEqual([200, 200, 200, 429]);
    });

    it('never limits the health probes', async () => {
      for (let i = 0; i < 5; i++) {
        expect((await api.request({ method: 'GET', url: '/health/live' })).statusCode).toBe(200);
      }
    });
  });

  describe('the API documents and their page, RATE_LIMIT_PER_MINUTE=3', () => {
    let api: TestApp;

    beforeAll(async () => {
      api = await createTestApp({ RATE_LIMIT_PER_MINUTE: '3' });
    });
    afterAll(() => api.close());

    const get = (url: string, remoteAddress = '127.0.0.1') =>
      api.app.inject({ method: 'GET', url, remoteAddress });

    it('count for their client address, with the budget of the public routes and the same 429', async () => {
      const served = [];
      for (const url of [API_DOCS_PATHS.json, API_DOCS_PATHS.yaml, API_DOCS_PATHS.page]) {
        const response = await get(url);
        expect(response.headers['x-ratelimit-limit']).toBe('3');
        served.push(response.statusCode);
      }
      expect(served).toEqual([200, 200, 200]);
      const urls = [...Object.values(API_DOCS_PATHS), '/docs/swagger-ui.css', '/metrics'];
      for (const url of urls) expectLimited(await get(url), url);
      expect((await get(API_DOCS_PATHS.json, '192.0.2.7')).statusCode).toBe(200);
    });
  });

  describe('TRUST_PROXY=127.0.0.1, RATE_LIMIT_PER_MINUTE=3', () => {
    let api: TestApp;

    beforeAll(async () => {
      api = await createTestApp({ RATE_LIMIT_PER_MINUTE: '3', TRUST_PROXY: '127.0.0.1' });
    });
    afterAll(() => api.close());

    const scrape = (remoteAddress: string, forwardedFor: string) =>
      api.request({
        method: 'GET',
        url: '/metrics',
        remoteAddress,
        headers: { 'x-forwarded-for': forwardedFor },
      });

    it('counts requests without a token by the address the trusted proxy forwards', async () => {
      const statuses = [];
      for (let i = 0; i < 4; i++)
        statuses.push((await scrape('127.0.0.1', '203.0.113.5')).statusCode);
      expect(statuses).toEqual([200, 200, 200, 429]);
      expect((await scrape('127.0.0.1', '203.0.113.6')).statusCode).toBe(200);
    });

    it('ignores X-Forwarded-For from a peer outside the range', async () => {
      const statuses = [];
      for (const forwarded of ['203.0.113.7', '203.0.113.8', '203.0.113.9', '203.0.113.10']) {
        statuses.push((await scrape('192.0.2.61', forwarded)).statusCode);
      }
      expect(statuses).toEqual([200, 200, 200, 429]);
    });
  });

  describe('RATE_LIMIT_PER_MINUTE=0', () => {
    let api: TestApp;

    beforeAll(async () => {
      api = await createTestApp({ RATE_LIMIT_PER_MINUTE: '0' });
    });
    afterAll(() => api.close());

    it('turns rate limiting off', async () => {
      const token = await api.issueToken();
      for (let id = 1; id <= 20; id++) {
        const response = await api.request({
          method: 'POST',
          url: '/plants',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          payload: JSON.stringify({ id, name: 'Unlimited' }),
        });
        expect(response.statusCode).toBe(200);
        expect(response.headers['x-ratelimit-limit']).toBeUndefined();
      }
    });
  });
});
