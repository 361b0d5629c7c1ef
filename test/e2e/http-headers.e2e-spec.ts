import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { describeOnEmbeddedRun } from '../support/test-database.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

// The HTTP layer's, not the database's: the embedded run covers it.
describeOnEmbeddedRun('request ids and response headers', () => {
  let api: TestApp;

  beforeAll(async () => {
    api = await createTestApp();
  });
  afterAll(() => api.close());

  const live = (headers: Record<string, string> = {}) =>
    api.request({ method: 'GET', url: '/health/live', headers });

  it('returns the X-Request-Id the client sent', async () => {
    const response = await live({ 'x-request-id': 'checkout-7f3a.2:retry_1' });
    expect(response.headers['x-request-id']).toBe('checkout-7f3a.2:retry_1');
  });

  it('generates a UUID when the client sends none, a new one each time', async () => {
    const first = (await live()).headers['x-request-id'];
    const second = (await live()).headers['x-request-id'];
    expect(first).toMatch(UUID);
    expect(second).toMatch(UUID);
    expect(second).not.toBe(first);
  });

  it.each([
    ['too long', 'x'.repeat(129)],
    ['with spaces', 'my request'],
    ['with markup', '<script>'],
    ['with quotes', '"},"level":"fatal'],
  ])('replaces an id that is not sane (%s) with a generated one', async (_case, id) => {
    expect((await live({ 'x-request-id': id })).headers['x-request-id']).toMatch(UUID);
  });

  it('puts the request id on errors too', async () => {
    const response = await api.request({
      method: 'POST',
      url: '/plants',
      headers: { 'x-request-id': 'failing-1' },
    });
    expect(response.statusCode).toBe(401);
    expect(response.headers['x-request-id']).toBe('failing-1');
  });

  it.each([
    ['a route that does not exist', '/no/such/route', 404],
    ['a route refused without a token', '/plants', 401],
    ['a route served', '/health/live', 200],
  ])(
    'sends security headers suited to a JSON API and no X-Powered-By, on %s',
    async (_case, url, status) => {
      const response = await api.request({ method: 'GET', url });
      expect(response.statusCode).toBe(status);
      expect(response.headers).toMatchObject({
        'x-content-type-options': 'nosniff',
        'x-frame-options': 'SAMEORIGIN',
        'referrer-policy': 'no-referrer',
        'cross-origin-resource-policy': 'same-origin',
      });
      expect(response.headers['content-security-policy']).toContain("default-src 'self'");
      expect(response.headers['strict-transport-security']).toContain('max-age=');
      // For HTML pages or clients long gone: nothing a JSON answer needs.
      for (const header of [
        'x-powered-by',
        'origin-agent-cluster',
        'x-dns-prefetch-control',
        'x-download-options',
        'x-permitted-cross-domain-policies',
        'x-xss-protection',
      ]) {
        expect(response.headers[header], header).toBeUndefined();
      }
    },
  );

  it('does not answer cross-origin requests with CORS headers', async () => {
    const preflight = await api.request({
      method: 'OPTIONS',
      url: '/plants',
      headers: { origin: 'https://elsewhere.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    const simple = await live({ origin: 'https://elsewhere.example' });
    expect(simple.headers['access-control-allow-origin']).toBeUndefined();
  });
});
