import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Scope } from '../../src/auth/scopes.js';
import { TokensService } from '../../src/auth/tokens.service.js';
import { expectError, plantsClient } from '../support/plants-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { cliActor } from '../../src/audit/actor.js';

/** Every plant operation, the scope it needs, and a request it would otherwise carry out. */
const OPERATIONS: Array<{ method: string; url: string; body?: object; scope: Scope }> = [
  { method: 'POST', url: '/plants', body: { id: 1, name: 'Fern' }, scope: 'plants:write' },
  { method: 'GET', url: '/plants', scope: 'plants:read' },
  { method: 'GET', url: '/plants/1', scope: 'plants:read' },
  { method: 'PUT', url: '/plants/1', body: { name: 'Fern' }, scope: 'plants:write' },
  { method: 'DELETE', url: '/plants/1', scope: 'plants:write' },
];

describe('scopes of the plant operations', () => {
  let api: TestApp;

  beforeAll(async () => {
    api = await createTestApp();
  });
  beforeEach(async () => {
    await plantsClient(api, await api.issueToken()).create({ id: 1, name: 'Fern' });
  });
  afterAll(() => api.close());

  describe.each(OPERATIONS)('$method $url', ({ method, url, body, scope }) => {
    const send = (token: string | undefined) => plantsClient(api, token).send(method, url, body);

    it('answers 401 with a Bearer challenge when no token is sent', async () => {
      const response = await send(undefined);
      expectError(response, 401, /bearer token is required/);
      expect(response.headers['www-authenticate']).toMatch(/^Bearer realm="plant-store"/);
    });

    it('answers 401 for an unknown token', async () => {
      const response = await send('pst_unknown');
      expectError(response, 401, /malformed, unknown, expired or revoked/);
      expect(response.headers['www-authenticate']).toMatch(/^Bearer .*error="invalid_token"/);
    });

    it('answers 401 for an expired token and for a revoked one', async () => {
      expectError(await send(await api.issueToken({ expiresInMs: -1000 })), 401, /expired/);
      const revoked = await api.issueToken({ name: 'to-revoke' });
      await api.app.get(TokensService).revoke('to-revoke', cliActor());
      expectError(await send(revoked), 401, /revoked/);
    });

    it(`answers 403 for a token without ${scope}`, async () => {
      const otherScope = scope === 'plants:read' ? 'plants:write' : 'plants:read';
      const response = await send(await api.issueToken({ scopes: [otherScope] }));
      expectError(response, 403, new RegExp(`lacks the scope ${scope}`));
    });

    it(`carries the request out with a token holding only ${scope}`, async () => {
      const response = await send(await api.issueToken({ scopes: [scope] }));
      expect(response.statusCode).toBeLessThan(300);
    });
  });
});
