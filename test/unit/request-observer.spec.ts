import { request as httpRequest } from 'node:http';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import {
  observeRequests,
  recordedStatus,
  routePattern,
} from '../../src/common/http/request-observer.js';

describe('observeRequests', () => {
  const servers: FastifyInstance[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  /** A server whose observers each write what they are told into their own list. */
  function serverObservedBy(...observerEvents: string[][]) {
    const server = Fastify();
    servers.push(server);
    for (const events of observerEvents) {
      observeRequests(server, {
        started: (request) => events.push(`started ${routePattern(request)}`),
        finished: (request, reply) =>
          events.push(`finished ${routePattern(request)} ${recordedStatus(reply)}`),
      });
    }
    return server;
  }

  /** Answers GET /plants/:id with how many `close` listeners its response has. */
  async function closeListenersOf(server: FastifyInstance) {
    let listeners = -1;
    server.get('/plants/:id', async (_request, reply) => {
      listeners = reply.raw.listenerCount('close');
      return {};
    });
    await fetch(`${await server.listen({ port: 0, host: '127.0.0.1' })}/plants/7`);
    return listeners;
  }

  it('tells every observer once per request, through one listener', async () => {
    const first: string[] = [];
    const second: string[] = [];
    const observed = await closeListenersOf(serverObservedBy(first, second));
    const unobserved = await closeListenersOf(serverObservedBy());
    await expect.poll(() => second.length).toBe(2);

    const expected = ['started /plants/:id', 'finished /plants/:id 200'];
    expect(first).toEqual(expected);
    expect(second).toEqual(expected);
    expect(observed).toBe(unobserved + 1);
  });

  it('keeps the observers of different servers apart', async () => {
    const ofA: string[] = [];
    const ofB: string[] = [];
    const a = serverObservedBy(ofA);
    serverObservedBy(ofB).get('/b', async () => ({}));
    a.get('/a', async () => ({}));

    await fetch(`${await a.listen({ port: 0, host: '127.0.0.1' })}/a`);
    await expect.poll(() => ofA).toEqual(['started /a', 'finished /a 200']);
    expect(ofB).toEqual([]);
  });

  it('tells them of a request whose client went away before the answer', async () => {
    const events: string[] = [];
    const server = serverObservedBy(events);
    let arrived!: () => void;
    const handlerReached = new Promise<void>((resolve) => (arrived = resolve));
    server.get('/slow', async () => {
      arrived();
      await new Promise((resolve) => setTimeout(resolve, 500));
      return {};
    });
    const client = httpRequest(`${await server.listen({ port: 0, host: '127.0.0.1' })}/slow`);
    // The hang-up the client sees is what the test does to it.
    client.on('error', () => undefined);
    const closed = new Promise((resolve) => client.on('close', resolve));
    client.end();
    await handlerReached;
    client.destroy();
    await closed;

    // 499, not the 200 the handler was about to answer.
    await expect.poll(() => events).toEqual(['started /slow', 'finished /slow 499']);
  });
});
