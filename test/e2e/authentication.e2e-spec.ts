import { getRepositoryToken } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ApiToken } from '../../src/auth/entities/api-token.entity.js';
import { UNKNOWN_TOKEN_TTL_MS } from '../../src/auth/tokens.module.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

describe('bearer authentication on POST /plants', () => {
  let api: TestApp;
  let nextId = 1;

  const createPlant = (headers: Record<string, string>, url = '/plants', extra: object = {}) =>
    api.request({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', ...headers },
      payload: JSON.stringify({ id: nextId++, name: 'Pothos', ...extra }),
    });

  const expectUnauthorized = (
    response: Awaited<ReturnType<typeof createPlant>>,
    challenge: RegExp = /^Bearer realm="plant-store"/,
  ) => {
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toMatch(challenge);
    expect(response.json()).toEqual({ error: 401, message: expect.any(String) });
  };

  beforeAll(async () => {
    api = await createTestApp();
  });
  afterAll(() => api.close());

  it('accepts a valid token with plants:write', async () => {
    const token = await api.issueToken({ scopes: ['plants:write'] });
    expect((await createPlant({ authorization: `Bearer ${token}` })).statusCode).toBe(200);
  });

  it('accepts the scheme name in any case, as RFC 6750 allows', async () => {
    const token = await api.issueToken();
    expect((await createPlant({ authorization: `bearer ${token}` })).statusCode).toBe(200);
  });

  it('answers a request without Authorization with 401 and a Bearer challenge', async () => {
    const response = await createPlant({});
    expectUnauthorized(response);
    expect(response.json().message).toMatch(/bearer token is required/);
  });

  it.each([
    ['another scheme', 'Basic dXNlcjpwYXNz'],
    ['no token', 'Bearer'],
    ['an empty token', 'Bearer '],
    ['extra parts', 'Bearer a b'],
  ])('answers a malformed header (%s) with 401', async (_case, authorization) => {
    expectUnauthorized(await createPlant({ authorization }));
  });

  it('answers an unknown token with 401 invalid_token', async () => {
    expectUnauthorized(
      await createPlant({ authorization: 'Bearer pst_not-a-real-token' }),
      /error="invalid_token"/,
    );
  });

  it('asks the database about an unknown token once per UNKNOWN_TOKEN_TTL_MS, not once per request', async () => {
    const lookups = vi.spyOn(
      api.app.get<Repository<ApiToken>>(getRepositoryToken(ApiToken)),
      'findOneBy',
    );
    const headers = { authorization: 'Bearer pst_unknownunknownunknownunknownunknownunknow' };
    const started = Date.now();
    for (let round = 0; round < 10; round++) {
      const answers = await Promise.all(Array.from({ length: 20 }, () => createPlant(headers)));
      for (const answer of answers) expectUnauthorized(answer);
    }
    const windows = Math.ceil((Date.now() - started) / UNKNOWN_TOKEN_TTL_MS);
    expect(lookups.mock.calls.length).toBeGreaterThanOrEqual(1);
    expect(lookups.mock.calls.length).toBeLessThanOrEqual(windows);
    lookups.mockRestore();
  });

  it('answers an expired token with 401', async () => {
    const token = await api.issueToken({ expiresInMs: 1 });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expectUnauthorized(await createPlant({ authorization: `Bearer ${token}` }), /invalid_token/);
  });

  it('answers a revoked token with 401', async () => {
    const token = await api.issueToken({ name: 'to-revoke' });
    expect((await createPlant({ authorization: `Bearer ${token}` })).statusCode).toBe(200);
    await api.revokeToken('to-revoke');
    expectUnauthorized(await createPlant({ authorization: `Bearer ${token}` }), /invalid_token/);
  });

  it('answers a token without plants:write with 403', async () => {
    const token = await api.issueToken({ scopes: ['plants:read'] });
    const response = await createPlant({ authorization: `Bearer ${token}` });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({
      error: 403,
      message: 'this token lacks the scope plants:write',
    });
  });

  it('refuses a token sent in the query string', async () => {
    const token = await api.issueToken();
    expectUnauthorized(await createPlant({}, `/plants?access_token=${token}`));
  });

  it('refuses a token sent in the body', async () => {
    const token = await api.issueToken();
    expectUnauthorized(await createPlant({}, '/plants', { access_token: token }));
  });

  it('checks the token before it looks at the body', async () => {
    const response = await api.request({
      method: 'POST',
      url: '/plants',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ id: 'not a number' }),
    });
    expectUnauthorized(response);
  });
});
