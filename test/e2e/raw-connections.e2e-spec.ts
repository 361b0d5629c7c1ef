import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  send,
  startServiceOnTestDatabase,
  type ServiceOnTestDatabase,
} from '../support/built-service.js';
import { describeOnEmbeddedRun } from '../support/test-database.js';

/** The longest a test waits for the server to close a connection. */
const CLOSE_GUARD_MS = 45_000;

interface RawExchange {
  /** Everything the server sent before it closed the connection. */
  answer: string;
  seconds: number;
  /** Bytes of the request the client got onto the wire. */
  sentBytes: number;
}

/**
 * Opens a connection, sends `head`, lets `drive` go on writing (it is handed the socket
 * and returns a clean-up), and resolves once the server has closed the connection.
 */
function exchange(
  url: string,
  head: string,
  drive: (socket: Socket) => () => void = () => () => undefined,
): Promise<RawExchange> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    let answer = '';
    let stopDriving = () => undefined as void;
    const socket = connect(Number(port), hostname, () => {
      socket.write(head);
      stopDriving = drive(socket);
    });
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    // The server may close while the client is still writing: EPIPE or ECONNRESET.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      stopDriving();
      resolve({ answer, seconds: (Date.now() - started) / 1000, sentBytes: socket.bytesWritten });
    });
    setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server kept the connection for over ${CLOSE_GUARD_MS} ms`));
    }, CLOSE_GUARD_MS).unref();
  });
}

/** One more byte every half second, as a slow or malicious client sends. */
const trickle = (socket: Socket) => {
  const drip = setInterval(() => socket.write('a'), 500);
  return () => clearInterval(drip);
};

/** As much as the socket takes, 64 KiB at a time, up to `limit` bytes. */
const flood = (limit: number) => (socket: Socket) => {
  const chunk = 'x'.repeat(64 * 1024);
  const pump = () => {
    while (!socket.destroyed && socket.bytesWritten < limit && socket.write(chunk));
  };
  socket.on('drain', pump);
  pump();
  return () => socket.off('drain', pump);
};

interface StreamedAnswer {
  status: number;
  body: string;
  /** Bytes of the body written before the answer arrived. */
  writtenBytes: number;
}

/**
 * Streams `totalBytes` of body with Node's `http` client, 64 KiB a write, each when the
 * last has drained (as `pipe` does), and stops writing as soon as the answer arrives.
 * Without `contentLength` the body is chunked. Rejects if the connection fails instead.
 */
function streamBody(
  url: string,
  headers: Record<string, string>,
  totalBytes: number,
  contentLength: boolean,
): Promise<StreamedAnswer> {
  return new Promise((resolve, reject) => {
    const piece = Buffer.alloc(64 * 1024, 'x');
    const request = httpRequest(url, {
      method: 'POST',
      headers: { ...headers, ...(contentLength ? { 'content-length': totalBytes } : {}) },
    });
    let writtenBytes = 0;
    let answered = false;
    request.on('response', (response) => {
      answered = true;
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        resolve({ status: response.statusCode!, body, writtenBytes });
        request.destroy();
      });
    });
    request.on('error', reject);
    const write = () => {
      while (!answered && writtenBytes < totalBytes) {
        writtenBytes += piece.length;
        if (!request.write(piece)) return void request.once('drain', write);
      }
    };
    write();
  });
}

/** The contract's error, as a raw HTTP answer. */
function expectRawError(answer: string, status: number, message: RegExp) {
  const [head, body] = answer.split('\r\n\r\n');
  const [statusLine, ...headers] = head.split('\r\n');
  expect(statusLine).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
  expect(headers.join('\n')).toMatch(/^content-type: application\/json/im);
  expect(JSON.parse(body)).toEqual({ error: status, message: expect.stringMatching(message) });
}

describeOnEmbeddedRun(
  'clients on raw connections: slow, greedy or malformed (the built service)',
  () => {
    let started: ServiceOnTestDatabase;
    let url: string;
    let token: string;

    beforeAll(async () => {
      started = await startServiceOnTestDatabase();
      ({ url, token } = started);
    });
    afterAll(async () => {
      await started.stop();
    });

    const createPlant = (id: number) =>
      send(`${url}/plants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ id, name: 'Patient' }),
      });
    const postHead = (headers: string) =>
      `POST /plants HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\n` +
      `Content-Type: application/json\r\n${headers}\r\n`;

    it('closes a connection whose headers trickle in (slowloris) and one whose body does, with 408', async () => {
      const [headers, body] = await Promise.all([
        exchange(url, 'GET /health/live HTTP/1.1\r\nHost: localhost\r\nX-Slow: ', trickle),
        exchange(url, postHead('Content-Length: 1000\r\n'), trickle),
      ]);
      // Header time-out 10 s, request time-out 30 s, both checked every second.
      expect(headers.seconds).toBeGreaterThan(9);
      expect(headers.seconds).toBeLessThan(13);
      expectRawError(headers.answer, 408, /took too long/);
      expect(body.seconds).toBeGreaterThan(29);
      expect(body.seconds).toBeLessThan(33);
      expectRawError(body.answer, 408, /took too long/);
    }, 60_000);

    it('serves other clients as usual while one client holds 500 connections open', async () => {
      const { hostname, port } = new URL(url);
      const held = await Promise.all(
        Array.from(
          { length: 500 },
          () =>
            new Promise<Socket>((resolve, reject) => {
              const socket = connect(Number(port), hostname, () => {
                socket.write('GET /health/live HTTP/1.1\r\nHost: localhost\r\n');
                resolve(socket);
              });
              socket.on('error', reject);
            }),
        ),
      );
      try {
        for (let id = 1; id <= 20; id++) {
          const started = Date.now();
          expect((await createPlant(id)).status).toBe(200);
          expect(Date.now() - started).toBeLessThan(5_000);
        }
        expect(held.filter((socket) => socket.destroyed)).toEqual([]);
      } finally {
        for (const socket of held) socket.destroy();
      }
    });

    const HUNDRED_MEGABYTES = 100 * 1024 * 1024;

    it('refuses a body announced as 100 MB from its Content-Length alone, with 413, and closes', async () => {
      const { answer, seconds } = await exchange(
        url,
        postHead(`Content-Length: ${HUNDRED_MEGABYTES}\r\n`),
      );
      expectRawError(answer, 413, /too large/);
      expect(seconds).toBeLessThan(10);
    });

    it('stops reading a chunked body once it passes 64 KiB, with 413, and closes', async () => {
      const chunk = 'x'.repeat(100 * 1024);
      const { answer, seconds } = await exchange(
        url,
        postHead('Transfer-Encoding: chunked\r\n') + `${chunk.length.toString(16)}\r\n${chunk}`,
      );
      expectRawError(answer, 413, /too large/);
      expect(seconds).toBeLessThan(10);
    });

    it.each([
      ['with a Content-Length', `Content-Length: ${HUNDRED_MEGABYTES}\r\n`, ''],
      ['chunked', 'Transfer-Encoding: chunked\r\n', `${HUNDRED_MEGABYTES.toString(16)}\r\n`],
    ])(
      'never reads a 100 MB body sent %s whole: the client is cut off after a few MB',
      async (_, header, chunkSize) => {
        const { answer, sentBytes, seconds } = await exchange(
          url,
          postHead(header) + chunkSize,
          flood(HUNDRED_MEGABYTES),
        );
        expect(sentBytes).toBeLessThan(HUNDRED_MEGABYTES / 10);
        expect(seconds).toBeLessThan(10);
        expectRawError(answer, 413, /too large/);
      },
    );

    it.each([
      ['with a Content-Length', true],
      ['chunked', false],
    ])(
      'lets a client streaming a 10 MB body %s read its 413, and serves others meanwhile',
      async (_, contentLength) => {
        const TEN_MEGABYTES = 10 * 1024 * 1024;
        const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
        const streams = Array.from({ length: 4 }, () =>
          streamBody(`${url}/plants`, headers, TEN_MEGABYTES, contentLength),
        );
        const others = Array.from({ length: 10 }, (_, i) =>
          createPlant(contentLength ? 100 + i : 200 + i),
        );

        for (const answer of await Promise.all(streams)) {
          expect(answer.status).toBe(413);
          expect(JSON.parse(answer.body)).toEqual({
            error: 413,
            message: expect.stringMatching(/too large/),
          });
          expect(answer.writtenBytes).toBeLessThan(TEN_MEGABYTES);
        }
        expect((await Promise.all(others)).map((answer) => answer.status)).toEqual(
          Array(10).fill(200),
        );
      },
    );

    it("links the next page of GET /plants by the route's own path, not by an absolute-form request target", async () => {
      for (const id of [9_001, 9_002]) expect((await createPlant(id)).status).toBe(200);
      const { answer } = await exchange(
        url,
        'GET http://evil.example/plants?limit=1 HTTP/1.1\r\nHost: evil.example\r\n' +
          `Authorization: Bearer ${token}\r\nConnection: close\r\n\r\n`,
      );
      expect(answer).toMatch(/^HTTP\/1\.1 200 /);
      expect(answer).toMatch(/^link: <\/plants\?limit=1&cursor=[A-Za-z0-9_-]+>; rel="next"\r$/im);
    });

    it.each([
      ['a request line that is not HTTP', 'GARBAGE\r\n\r\n', 400, /not valid HTTP/],
      [
        'a header line without a colon',
        'GET /plants HTTP/1.1\r\nHost: x\r\nNo colon\r\n\r\n',
        400,
        /not valid HTTP/,
      ],
      [
        'a control character in a header',
        'GET /plants HTTP/1.1\r\nHost: x\r\nX-A: a\u0001b\r\n\r\n',
        400,
        /not valid HTTP/,
      ],
      [
        'both Content-Length and Transfer-Encoding',
        `POST /plants HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}`,
        400,
        /not valid HTTP/,
      ],
      [
        'headers over 16 KiB',
        `GET /plants HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
        431,
        /headers are too large/,
      ],
    ])(
      'answers %s in the error shape and closes the connection',
      async (_, request, status, message) => {
        const { answer } = await exchange(url, request);
        expectRawError(answer, status, message);
      },
    );
  },
);
