import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/test-app.js';

/** Sends raw bytes and reads the whole answer until the server closes the connection. */
function exchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let answer = '';
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

function parse(answer: string): { status: number; contentType: string; body: unknown } {
  const [head, body] = answer.split('\r\n\r\n');
  return {
    status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]),
    contentType: /^content-type: (.*)$/im.exec(head)?.[1] ?? '',
    body: JSON.parse(body),
  };
}

describe('requests that are not valid HTTP, or not what the service reads', () => {
  let api: TestApp;
  let port: number;

  beforeAll(async () => {
    api = await createTestApp();
    await api.app.listen({ port: 0, host: '127.0.0.1' });
    port = (api.app.getHttpServer().address() as { port: number }).port;
  });
  afterAll(() => api.close());

  it('answers bytes that are not HTTP with 400 in the error shape', async () => {
    const answer = parse(await exchange(port, 'GARBAGE\r\n\r\n'));
    expect(answer).toEqual({
      status: 400,
      contentType: 'application/json; charset=utf-8',
      body: { error: 400, message: 'the request is not valid HTTP/1.1' },
    });
  });

  it('answers headers over the limit with 431 in the error shape', async () => {
    const huge = 'x'.repeat(100_000);
    const answer = parse(
      await exchange(port, `GET /plants HTTP/1.1\r\nHost: x\r\nX-Huge: ${huge}\r\n\r\n`),
    );
    expect(answer).toEqual({
      status: 431,
      contentType: 'application/json; charset=utf-8',
      body: { error: 431, message: 'the request headers are too large' },
    });
  });

  it('answers a compressed body with 415: only identity is read', async () => {
    const token = await api.issueToken();
    const response = await api.request({
      method: 'POST',
      url: '/plants',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'content-encoding': 'gzip',
      },
      payload: '{"id":1,"name":"Zipped"}',
    });
    expect(response.statusCode).toBe(415);
    expect(response.json()).toEqual({
      error: 415,
      message: 'Content-Encoding gzip is not supported: send the body uncompressed',
    });
    expect(await api.database.query('SELECT id FROM plants')).toEqual([]);
  });
});
