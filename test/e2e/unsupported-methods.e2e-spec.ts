import { Controller, Get, Module } from '@nestjs/common';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Public } from '../../src/auth/decorators/public.decorator.js';
import { expectError } from '../support/plants-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { describeOnEmbeddedRun } from '../support/test-database.js';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'TRACE', 'QUERY'];
const WEBHOOK_ID = '5b0e2c1e-8f0a-4d55-9a43-0f7a3c2b9e61';

/** A module of the test's own, with one GET route: it gets 405 and OPTIONS without a line for them. */
@Controller()
class GadgetsController {
  @Public()
  @Get('gadgets/:id')
  find(): { gadget: string } {
    return { gadget: 'one' };
  }
}
@Module({ controllers: [GadgetsController] })
class GadgetsModule {}

/** A path the template names, with a plant's int64 id or a webhook's UUID in place of `{id}`. */
const concretePath = (template: string) =>
  template.replace('{id}', template.startsWith('/webhooks') ? WEBHOOK_ID : '9223372036854775807');

/** The `Allow` a path's documented operations make: HEAD with GET, OPTIONS always. */
const allowOf = (methods: string[]) =>
  [...methods, ...(methods.includes('GET') ? ['HEAD'] : []), 'OPTIONS'].sort().join(', ');

function expect405(response: LightMyRequestResponse, method: string, allow: string) {
  expect(response.headers.allow).toBe(allow);
  if (method === 'HEAD') {
    // Node's server sends no body with an answer to HEAD (light-my-request shows it).
    expect(response.statusCode).toBe(405);
    return;
  }
  expectError(
    response,
    405,
    new RegExp(`^${method} is not allowed on this path: it answers ${allow}$`),
  );
}

// The HTTP layer's, not the database's: the embedded run covers it.
describeOnEmbeddedRun('methods a path does not have', () => {
  let api: TestApp;
  let token: string;
  /** Each documented path, its concrete form and the Allow its operations make. */
  let paths: { template: string; path: string; allow: string }[];

  beforeAll(async () => {
    api = await createTestApp({}, undefined, undefined, [GadgetsModule]);
    token = await api.issueToken({ scopes: ['plants:read', 'plants:write', 'webhooks:manage'] });
    const byPath = Map.groupBy(api.contracts[0].operations(), ({ path }) => path);
    paths = [...byPath].map(([template, operations]) => ({
      template,
      path: concretePath(template),
      allow: allowOf(operations.map(({ method }) => method)),
    }));
  });
  afterAll(() => api.close());

  it('covers every path of the served document', () => {
    expect(paths.map(({ template }) => template).sort()).toEqual(
      [
        '/health/live',
        '/health/ready',
        '/metrics',
        '/plants',
        '/plants/{id}',
        '/webhooks',
        '/webhooks/{id}',
        '/webhooks/{id}/enable',
        '/webhooks/{id}/redeliver',
        '/webhooks/{id}/rotate-secret',
        '/gadgets/{id}',
      ].sort(),
    );
  });

  it('answers 405 with Allow at every documented path, for each method it lacks, with or without a token', async () => {
    for (const { path, allow } of paths) {
      const lacking = METHODS.filter((method) => !allow.split(', ').includes(method));
      for (const method of lacking) {
        for (const authorization of [undefined, `Bearer ${token}`, 'Bearer pst_unknown']) {
          const response = await api.request({
            method: method as 'GET',
            url: path,
            headers: authorization === undefined ? {} : { authorization },
          });
          expect405(response, method, allow);
        }
      }
    }
  });

  it.each([
    ['PATCH', '/plants', 'GET, HEAD, OPTIONS, POST'],
    ['TRACE', '/plants', 'GET, HEAD, OPTIONS, POST'],
    ['POST', '/plants/1', 'DELETE, GET, HEAD, OPTIONS, PUT'],
    ['PUT', '/health/live', 'GET, HEAD, OPTIONS'],
    ['HEAD', `/webhooks/${WEBHOOK_ID}/redeliver`, 'OPTIONS, POST'],
    ['DELETE', '/openapi.json', 'GET, HEAD, OPTIONS'],
    ['POST', '/docs', 'GET, HEAD, OPTIONS'],
    ['PUT', '/gadgets/1', 'GET, HEAD, OPTIONS'],
  ])('%s %s answers 405 with Allow: %s', async (method, url, allow) => {
    expect405(await api.request({ method: method as 'GET', url }), method, allow);
  });

  it.each([
    ['an id that is no id', { url: '/plants/not-an-id' }, 'DELETE, GET, HEAD, OPTIONS, PUT'],
    [
      'a body of another media type',
      { url: '/plants/1', headers: { 'content-type': 'text/plain' }, payload: 'not json' },
      'DELETE, GET, HEAD, OPTIONS, PUT',
    ],
    ['an invalid query', { url: '/plants?limit=0&cursor=' }, 'GET, HEAD, OPTIONS, POST'],
  ])('answers PATCH with %s 405 too: the method is checked first', async (_, request, allow) => {
    expect405(await api.request({ method: 'PATCH', ...request }), 'PATCH', allow);
  });

  it.each([
    ['/plants', 'GET, HEAD, OPTIONS, POST'],
    ['/plants/9223372036854775807', 'DELETE, GET, HEAD, OPTIONS, PUT'],
    [`/webhooks/${WEBHOOK_ID}/rotate-secret`, 'OPTIONS, POST'],
    ['/gadgets/1', 'GET, HEAD, OPTIONS'],
  ])('OPTIONS %s answers 204 with Allow: %s, without a token', async (url, allow) => {
    const response = await api.request({ method: 'OPTIONS', url });
    expect(response.statusCode).toBe(204);
    expect(response.headers.allow).toBe(allow);
    expect(response.body).toBe('');
  });

  it.each(['GET', 'PATCH', 'OPTIONS', 'HEAD'])(
    '%s on a path no route has is still a 404',
    async (method) => {
      const response = await api.request({ method: method as 'GET', url: '/plantz' });
      expect(response.statusCode).toBe(404);
      expect(response.headers.allow).toBeUndefined();
      if (method !== 'HEAD') expectError(response, 404, /^Cannot /);
    },
  );

  it('changes nothing for the methods a path has: 401 without a token, 200 with one', async () => {
    expectError(await api.request({ method: 'GET', url: '/plants' }), 401, /bearer token/);
    const listed = await api.request({
      method: 'GET',
      url: '/plants',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(listed.statusCode).toBe(200);
    expect(listed.headers.allow).toBeUndefined();
  });
});

describeOnEmbeddedRun('methods a path does not have, rate limited', () => {
  let api: TestApp;

  beforeAll(async () => {
    api = await createTestApp({ RATE_LIMIT_PER_MINUTE: '3' });
  });
  afterAll(() => api.close());

  it("counts a 405 and an OPTIONS in the client address's budget: the fourth is a 429", async () => {
    const from = { remoteAddress: '198.51.100.7' };
    expect((await api.request({ method: 'PATCH', url: '/plants', ...from })).statusCode).toBe(405);
    expect((await api.request({ method: 'OPTIONS', url: '/plants', ...from })).statusCode).toBe(
      204,
    );
    expect((await api.request({ method: 'TRACE', url: '/plants', ...from })).statusCode).toBe(405);
    const limited = await api.request({ method: 'PATCH', url: '/plants', ...from });
    expectError(limited, 429, /./);
    expect(limited.headers['retry-after']).toBeDefined();
    const elsewhere = { remoteAddress: '198.51.100.8' };
    expect((await api.request({ method: 'PATCH', url: '/plants', ...elsewhere })).statusCode).toBe(
      405,
    );
  });
});
