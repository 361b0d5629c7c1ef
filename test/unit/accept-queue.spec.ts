import { once } from 'node:events';
import { connect, createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { acceptQueueDrained } from '../../src/shutdown/accept-queue.js';

describe('acceptQueueDrained', () => {
  let server: Server;
  afterEach(() => {
    if (server.listening) server.close();
  });

  /**
   * A server that answers each connection `served`, and `count` clients that have all
   * connected (the kernel accepted them), most of them not taken in by Node yet: it takes
   * in one connection per event-loop turn. Resolves with how each client ends.
   */
  const queuedClients = async (count: number) => {
    server = createServer((socket) => socket.end('served'));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    const clients = Array.from({ length: count }, () => connect(port, '127.0.0.1'));
    const endings = clients.map(
      (client) =>
        new Promise<string>((resolve) => {
          let received = '';
          client.on('data', (chunk: Buffer) => (received += chunk.toString()));
          client.on('end', () => resolve(received));
          client.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
        }),
    );
    await Promise.all(clients.map((client) => once(client, 'connect')));
    return { endings: Promise.all(endings), takenIn: () => takenInSoFar(server) };
  };

  const takenInSoFar = (listening: Server) =>
    new Promise<number>((resolve, reject) =>
      listening.getConnections((error, count) => (error ? reject(error) : resolve(count))),
    );

  it('takes in every connection the kernel queued, so that closing the listener resets none', async () => {
    const { endings, takenIn } = await queuedClients(30);
    expect(await takenIn()).toBeLessThan(30);
    await acceptQueueDrained(server);
    server.close();
    expect(await endings).toEqual(Array.from({ length: 30 }, () => 'served'));
  });

  it('is needed: closing the listener at once resets the connections still queued', async () => {
    const { endings } = await queuedClients(30);
    server.close();
    expect((await endings).filter((ending) => ending === 'ECONNRESET').length).toBeGreaterThan(0);
  });

  it('resolves at once when nothing is queued', async () => {
    server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const started = performance.now();
    await acceptQueueDrained(server);
    expect(performance.now() - started).toBeLessThan(50);
  });
});
