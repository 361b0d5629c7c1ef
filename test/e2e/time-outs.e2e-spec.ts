import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddedPostgresServer } from '../../src/database/embedded-postgres.js';
import { issueToken, send, type ServiceProcess, startService } from '../support/built-service.js';
import { clusterProcesses } from '../support/embedded-server.js';

/**
 * Sends `head` and then one more byte every half second, as a slow or malicious client
 * does, until the server closes the connection; resolves with the seconds that took
 * and what the server answered.
 */
function trickle(url: string, head: string): Promise<{ seconds: number; answer: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    let answer = '';
    const socket = connect(Number(port), hostname, () => socket.write(head));
    const drip = setInterval(() => socket.write('a'), 500);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(drip);
      resolve({ seconds: (Date.now() - started) / 1000, answer });
    });
    setTimeout(() => {
      socket.destroy();
      reject(new Error('the server kept a trickling client for over 45 s'));
    }, 45_000).unref();
  });
}

describe('time-outs (the built service on its embedded PostgreSQL)', () => {
  let dataDir: string;
  let service: ServiceProcess;
  let url: string;
  let token: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'plant-store-timeouts-'));
    ({ service, url } = await startService({ DATA_DIR: dataDir }));
    const database = await EmbeddedPostgresServer.open(dataDir, { log: () => undefined });
    token = await issueToken(database.url);
  });
  afterAll(async () => {
    // SIGTERM, so that the service stops its PostgreSQL too.
    service.signal('SIGTERM');
    await service.exited;
    await rm(dataDir, { recursive: true, force: true });
  });

  const createPlant = (id: number) =>
    send(`${url}/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id, name: 'Patient' }),
    });

  it('closes a connection whose headers trickle in (slowloris) and one whose body does', async () => {
    const [headers, body] = await Promise.all([
      trickle(url, 'GET /health/live HTTP/1.1\r\nHost: localhost\r\nX-Slow: '),
      trickle(
        url,
        'POST /plants HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
          'Content-Length: 1000\r\n\r\n',
      ),
    ]);
    // Header time-out 10 s, request time-out 30 s, both checked every second.
    expect(headers.seconds).toBeGreaterThan(9);
    expect(headers.seconds).toBeLessThan(13);
    expect(headers.answer).toMatch(/^HTTP\/1\.1 408/);
    expect(body.seconds).toBeGreaterThan(29);
    expect(body.seconds).toBeLessThan(33);
    expect(body.answer).toMatch(/^HTTP\/1\.1 408/);
  }, 60_000);

  it('answers 503 within seconds while the database is frozen, and 200 once it thaws', async () => {
    expect((await createPlant(1)).status).toBe(200);
    const frozen = clusterProcesses(dataDir);
    for (const pid of frozen) process.kill(pid, 'SIGSTOP');
    try {
      let started = Date.now();
      const ready = await send(`${url}/health/ready`);
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(ready.status).toBe(503);
      expect(JSON.parse(ready.body)).toEqual({
        error: 503,
        message: 'the database is unavailable; try again shortly',
      });

      started = Date.now();
      const write = await createPlant(2);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(write.status).toBe(503);
      expect(JSON.parse(write.body)).toEqual({
        error: 503,
        message: 'the database is unavailable; try again shortly',
      });
    } finally {
      for (const pid of frozen) process.kill(pid, 'SIGCONT');
    }
    await expect
      .poll(async () => (await send(`${url}/health/ready`)).status, { timeout: 10_000 })
      .toBe(200);
    expect((await createPlant(3)).status).toBe(200);
  }, 40_000);
});
