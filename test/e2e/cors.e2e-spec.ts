import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { describeOnEmbeddedRun } from '../support/test-database.js';

const ALLOWED = 'https://app.example.com';
const OTHER = 'https://evil.example.net';

/** What a browser sends before a cross-origin request with a token and a JSON body. */
const preflight = (api: TestApp, origin: string, url = '/plants', method = 'POST') =>
  api.app.inject({
    method: 'OPTIONS',
    url,
    headers: {
      origin,
      'access-control-request-method': method,
      'access-control-request-headers': 'authorization,content-type',
    },
  });

// The HTTP layer's, not the database's: the embedded run covers it.
describeOnEmbeddedRun('CORS', () => {
  describe(`CORS_ORIGINS=${ALLOWED},http://localhost:5173`, () => {
    let api: TestApp;
    let token: string;

    beforeAll(async () => {
      api = await createTestApp({ CORS_ORIGINS: `${ALLOWED},http://localhost:5173` });
      token = await api.issueToken();
    });
    afterAll(() => api.close());

    it.each([
      ['/plants', 'POST'],
      ['/plants', 'GET'],
      ['/plants/9223372036854775807', 'PUT'],
      ['/plants/1', 'DELETE'],
    ])(
      'answers the preflight of %s %s from an allowed origin, Authorization included',
      async (url, method) => {
        const response = await preflight(api, ALLOWED, url, method);
        expect(response.statusCode).toBe(204);
        expect(response.headers).toMatchObject({
          'access-control-allow-origin': ALLOWED,
          'access-control-allow-methods': 'GET, POST, PUT, PATCH, DELETE',
          'access-control-allow-headers': 'Authorization, Content-Type, x-request-id',
          'access-control-max-age': '600',
          vary: expect.stringMatching(/origin/i),
        });
      },
    );

    it('lets a page of an allowed origin read answers, errors and the paging headers', async () => {
      const listed = await api.request({
        method: 'GET',
        url: '/plants',
        headers: { origin: 'http://localhost:5173', authorization: `Bearer ${token}` },
      });
      expect(listed.statusCode).toBe(200);
      expect(listed.headers['access-control-allow-origin']).toBe('http://localhost:5173');
      expect(listed.headers['access-control-expose-headers']).toBe(
        'Link, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, x-request-id',
      );
      const refused = await api.request({
        method: 'GET',
        url: '/plants',
        headers: { origin: ALLOWED },
      });
      expect(refused.statusCode).toBe(401);
      expect(refused.headers['access-control-allow-origin']).toBe(ALLOWED);
    });

    it('keeps Vary: Origin on GET /metrics, whose answer varies by Accept too', async () => {
      const response = await api.request({
        method: 'GET',
        url: '/metrics',
        headers: { origin: ALLOWED },
      });
      expect(response.headers.vary).toBe('Origin, Accept');
    });

    it('gives any other origin no CORS header: its preflight is an OPTIONS like any other, 204 with Allow', async () => {
      const response = await preflight(api, OTHER);
      expect(response.statusCode).toBe(204);
      expect(response.headers.allow).toBe('GET, HEAD, OPTIONS, POST');
      expect(
        Object.keys(response.headers).filter((name) => name.startsWith('access-control-')),
      ).toEqual([]);
      const listed = await api.request({
        method: 'GET',
        url: '/plants',
        headers: { origin: OTHER, authorization: `Bearer ${token}` },
      });
      expect(listed.statusCode).toBe(200);
      expect(listed.headers['access-control-allow-origin']).toBeUndefined();
    });

    it('leaves an OPTIONS that is no preflight to the service: 204 with Allow, 404 on an unknown path', async () => {
      const options = await api.request({ method: 'OPTIONS', url: '/plants/1' });
      expect(options.statusCode).toBe(204);
      expect(options.headers.allow).toBe('DELETE, GET, HEAD, OPTIONS, PUT');
      expect(options.headers['access-control-allow-origin']).toBeUndefined();
      const unknown = await api.request({ method: 'OPTIONS', url: '/plantz' });
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json()).toMatchObject({ error: 404 });
      const unknownPreflight = await preflight(api, OTHER, '/plantz');
      expect(unknownPreflight.statusCode).toBe(404);
    });
  });

  describe('CORS_ORIGINS unset', () => {
    let api: TestApp;

    beforeAll(async () => {
      api = await createTestApp();
    });
    afterAll(() => api.close());

    it('sends no CORS header to any origin: a preflight is an OPTIONS, 204 with Allow', async () => {
      const response = await preflight(api, ALLOWED);
      expect(response.statusCode).toBe(204);
      expect(response.headers.allow).toBe('GET, HEAD, OPTIONS, POST');
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
      const refused = await api.request({
        method: 'GET',
        url: '/plants',
        headers: { origin: ALLOWED },
      });
      expect(refused.statusCode).toBe(401);
      expect(refused.headers['access-control-allow-origin']).toBeUndefined();
    });
  });
});
