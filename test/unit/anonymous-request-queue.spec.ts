import type { HttpAdapterHost } from '@nestjs/core';
import Fastify from 'fastify';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { AnonymousRequestQueue } from '../../src/auth/anonymous-request-queue.js';
import { hashTokenSecret } from '../../src/auth/token-secret.js';
import type { VerifiedTokenCache } from '../../src/auth/verified-token-cache.js';
import type { MetricsService } from '../../src/metrics/metrics.service.js';

/** A server behind the queue, where only the token `pst_verified` counts as verified lately. */
async function serverBehindQueue() {
  const fastify = Fastify();
  const verified = { holds: (hash: string) => hash === hashTokenSecret('pst_verified') };
  const adapterHost = { httpAdapter: { getInstance: () => fastify } };
  const registry = new Registry();
  new AnonymousRequestQueue(
    adapterHost as unknown as HttpAdapterHost,
    verified as unknown as VerifiedTokenCache<never>,
    { registry } as MetricsService,
  ).onModuleInit();
  const handled: string[] = [];
  fastify.get('/:name', async (request) => {
    handled.push((request.params as { name: string }).name);
    return {};
  });
  await fastify.ready();
  const waiting = async () =>
    (await registry.getSingleMetric('http_anonymous_requests_waiting')!.get()).values[0].value;
  return { fastify, handled, waiting };
}

describe('AnonymousRequestQueue', () => {
  it('serves a request with a verified token before anonymous ones that arrived first', async () => {
    const { fastify, handled, waiting } = await serverBehindQueue();
    const anonymous = Array.from({ length: 100 }, (_, index) =>
      fastify.inject({ url: `/anonymous-${index}` }),
    );
    const verified = fastify.inject({
      url: '/verified',
      headers: { authorization: 'Bearer pst_verified' },
    });
    // The first 16 went on in the first turn; the other 84 wait, counted by the gauge.
    while (!handled.includes('anonymous-0')) await new Promise(setImmediate);
    expect(await waiting()).toBe(84);
    await Promise.all([...anonymous, verified]);
    expect(await waiting()).toBe(0);
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
    ['another scheme of six letters', 'Digest pst_verified'],
    ['a second space', 'Bearer  pst_verified'],
  ])('queues a request with %s, and serves it', async (_, authorization) => {
    const { fastify, handled } = await serverBehindQueue();
    const headers = authorization === undefined ? {} : { authorization };
    const response = await fastify.inject({ url: '/queued', headers });
    expect(response.statusCode).toBe(200);
    expect(handled).toEqual(['queued']);

    // Queued, not let through: a verified request sent after 20 of them goes ahead of most.
    handled.length = 0;
    const queued = Array.from({ length: 20 }, () => fastify.inject({ url: '/queued', headers }));
    await Promise.all([
      ...queued,
      fastify.inject({ url: '/verified', headers: { authorization: 'Bearer pst_verified' } }),
    ]);
    expect(handled.indexOf('verified')).toBeLessThan(16);
    await fastify.close();
  });
});
