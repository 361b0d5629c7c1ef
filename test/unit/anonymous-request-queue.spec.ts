import type { HttpAdapterHost } from '@nestjs/core';
import Fastify from 'fastify';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { AnonymousRequestQueue } from '../../src/auth/anonymous-request-queue.js';
import type { TokensService } from '../../src/auth/tokens.service.js';
import type { MetricsService } from '../../src/metrics/metrics.service.js';

/** A server behind the queue, where only the token `pst_verified` counts as verified lately. */
async function serverBehindQueue() {
  const fastify = Fastify();
  const tokens = { isRecentlyVerified: (token: string) => token === 'pst_verified' };
  const adapterHost = { httpAdapter: { getInstance: () => fastify } };
  new AnonymousRequestQueue(
    adapterHost as unknown as HttpAdapterHost,
    tokens as unknown as TokensService,
    { registry: new Registry() } as MetricsService,
  ).onModuleInit();
  const handled: string[] = [];
  fastify.get('/:name', async (request) => {
    handled.push((request.params as { name: string }).name);
    return {};
  });
  await fastify.ready();
  return { fastify, handled };
}

describe('AnonymousRequestQueue', () => {
  it('serves a request with a verified token before anonymous ones that arrived first', async () => {
    const { fastify, handled } = await serverBehindQueue();
    const anonymous = Array.from({ length: 100 }, (_, index) =>
      fastify.inject({ url: `/anonymous-${index}` }),
    );
    const verified = fastify.inject({
      url: '/verified',
      headers: { authorization: 'Bearer pst_verified' },
    });
    await Promise.all([...anonymous, verified]);
    expect(handled).toHaveLength(101);
    expect(handled.indexOf('verified')).toBeLessThan(16);
    // The anonymous ones keep their order: first come, first served.
    const anonymousOrder = handled.filter((name) => name !== 'verified');
    expect(anonymousOrder).toEqual(anonymous.map((_, index) => `anonymous-${index}`));
    await fastify.close();
  });

  it.each([
    ['no Authorization header', undefined],
    ['an unknown token', 'Bearer pst_unknown'],
    ['another scheme', 'Basic pst_verified'],
    ['a second space', 'Bearer  pst_verified'],
  ])('queues a request with %s, and serves it', async (_, authorization) => {
    const { fastify, handled } = await serverBehindQueue();
    const response = await fastify.inject({
      url: '/queued',
      headers: authorization === undefined ? {} : { authorization },
    });
    expect(response.statusCode).toBe(200);
    expect(handled).toEqual(['queued']);
    await fastify.close();
  });
});
