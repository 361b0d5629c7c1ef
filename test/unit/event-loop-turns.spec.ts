import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { acceptQueueDrained, eventLoopTurns } from '../../src/shutdown/event-loop-turns.js';

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

describe('eventLoopTurns', () => {
  /**
   * A keep-alive client (a process of its own) gets its first answer, then sends a second
   * request; the server's loop is held until those bytes are in its socket, then
   * `closeIdle` runs. Resolves with what became of the second request.
   */
  const secondRequestWhenIdleClosed = async (closeIdle: (server: HttpServer) => void) => {
    const directory = await mkdtemp(join(tmpdir(), 'plant-store-turns-'));
    const written = join(directory, 'written');
    let requests = 0;
    const server = createHttpServer((request, response) => {
      const which = ++requests;
      request.resume();
      request.on('end', () => response.end(`served ${which}`));
      if (which > 1) return;
      response.on('finish', () => {
        // A busy loop: the client's second request arrives meanwhile, unread.
        const deadline = Date.now() + 10_000;
        while (!existsSync(written)) if (Date.now() > deadline) throw new Error('no request');
        closeIdle(server);
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    const client = spawn(
      process.execPath,
      [
        '-e',
        `const socket = require('node:net').connect(${port}, '127.0.0.1', () =>
           socket.write('GET /1 HTTP/1.1\\r\\nHost: a\\r\\n\\r\\n'));
         let received = '';
         socket.on('data', (chunk) => {
           const first = !received.includes('served 1');
           received += chunk;
           if (first && received.includes('served 1'))
             socket.write('GET /2 HTTP/1.1\\r\\nHost: a\\r\\n\\r\\n', () =>
               require('node:fs').writeFileSync(${JSON.stringify(written)}, ''));
           if (received.includes('served 2')) { console.log('served'); socket.destroy(); }
         });
         socket.on('error', (error) => console.log(error.code));`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let outcome = '';
    client.stdout!.on('data', (chunk: Buffer) => (outcome += chunk.toString()));
    try {
      await once(client, 'close');
      return outcome.trim();
    } finally {
      server.closeAllConnections();
      server.close();
      await rm(directory, { recursive: true, force: true });
    }
  };

  it('lets the loop read a request already in a keep-alive connection, which closing it as idle at once would reset', async () => {
    expect(await secondRequestWhenIdleClosed((server) => server.closeIdleConnections())).toBe(
      'ECONNRESET',
    );
    expect(
      await secondRequestWhenIdleClosed(
        (server) => void eventLoopTurns(2).then(() => server.closeIdleConnections()),
      ),
    ).toBe('served');
  });
});
