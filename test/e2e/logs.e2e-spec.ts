import { once } from 'node:events';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  freePort,
  send,
  ServiceProcess,
  spawnInTerminal,
  startService,
  startServiceOnTestDatabase,
  TERMINAL,
  type ServiceOnTestDatabase,
} from '../support/built-service.js';
import type { TestDatabase } from '../support/test-database.js';

describe('structured logs (the built service)', () => {
  let started: ServiceOnTestDatabase;
  let database: TestDatabase;
  let service: ServiceProcess;
  let url: string;
  let token: string;

  beforeAll(async () => {
    started = await startServiceOnTestDatabase({ LOG_LEVEL: 'trace' });
    ({ database, service, url, token } = started);
  });
  afterAll(async () => {
    await started.stop();
  });

  const createPlant = (headers: Record<string, string>) =>
    send(`${url}/plants`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ id: 42, name: 'Logged fern' }),
    });

  it('writes one JSON line per request with id, method, route, status and duration', async () => {
    const response = await createPlant({
      authorization: `Bearer ${token}`,
      'x-request-id': 'log-test-1',
    });
    expect(response.status).toBe(200);
    await expect
      .poll(() => service.logLines().filter((l) => l.requestId === 'log-test-1'))
      .toEqual([
        expect.objectContaining({
          level: 'info',
          msg: 'request completed',
          requestId: 'log-test-1',
          method: 'POST',
          route: '/plants',
          path: '/plants',
          status: 200,
          durationMs: expect.any(Number),
          time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        }),
      ]);
  });

  it('names the client address on every line, and the token on lines of authenticated requests', async () => {
    const [authenticated, rejected, spoofed] = await Promise.all([
      createPlant({ authorization: `Bearer ${token}`, 'x-request-id': 'log-client-ok' }),
      createPlant({ authorization: 'Bearer unknown-token', 'x-request-id': 'log-client-401' }),
      createPlant({ 'x-forwarded-for': '203.0.113.9', 'x-request-id': 'log-client-spoofed' }),
    ]);
    expect([authenticated.status, rejected.status, spoofed.status]).toEqual([200, 401, 401]);
    const lineOf = (requestId: string) =>
      service.logLines().find((line) => line.requestId === requestId);
    // Each line is written when its response finishes, which may be after the client has it.
    for (const requestId of ['log-client-ok', 'log-client-401', 'log-client-spoofed']) {
      await expect.poll(() => lineOf(requestId)).toBeDefined();
    }

    expect(lineOf('log-client-ok')).toMatchObject({
      clientAddress: '127.0.0.1',
      tokenId: expect.any(String),
      tokenName: 'ops-test',
    });
    for (const unauthenticated of ['log-client-401', 'log-client-spoofed']) {
      const line = lineOf(unauthenticated)!;
      expect(line).toMatchObject({ status: 401, clientAddress: '127.0.0.1' });
      expect(line).not.toHaveProperty('tokenId');
      expect(line).not.toHaveProperty('tokenName');
    }
  });

  it('names the address X-Forwarded-For gives when the peer is a proxy TRUST_PROXY lists', async () => {
    const behindProxies = async (trustProxy: string) => {
      const proxied = await startService({ DATABASE_URL: database.url, TRUST_PROXY: trustProxy });
      try {
        await send(`${proxied.url}/health/live`, {
          headers: { 'x-forwarded-for': '203.0.113.9', 'x-request-id': 'log-proxied' },
        });
        const lineOf = () =>
          proxied.service.logLines().find((line) => line.requestId === 'log-proxied');
        await expect.poll(lineOf).toBeDefined();
        return lineOf()!.clientAddress;
      } finally {
        await proxied.service.stop();
      }
    };
    expect(await behindProxies('127.0.0.1')).toBe('203.0.113.9');
    expect(await behindProxies('10.0.0.0/8')).toBe('127.0.0.1');
  });

  it.skipIf(!TERMINAL)('writes readable lines, not JSON, in a terminal', async () => {
    const port = await freePort();
    const terminal = spawnInTerminal({
      DATABASE_URL: database.url,
      PORT: String(port),
      LOG_LEVEL: 'info',
    });
    let shown = '';
    terminal.stdout!.on('data', (chunk: Buffer) => (shown += chunk.toString()));
    // Without its colours, as a person reads it.
    const text = () => stripVTControlCharacters(shown);
    try {
      await expect.poll(text, { timeout: 20_000 }).toMatch(/INFO: \[Http\] listening on http/);
      await send(`http://127.0.0.1:${port}/health/live`, {
        headers: { 'x-request-id': 'log-in-terminal' },
      });
      await expect
        .poll(text)
        .toMatch(/INFO: request completed\r?\n {4}requestId: "log-in-terminal"/);
      const lines = text()
        .split(/\r?\n/)
        .filter((line) => line.trim() !== '');
      expect(lines.filter((line) => line.startsWith('{'))).toEqual([]);
    } finally {
      terminal.kill('SIGTERM');
      await once(terminal, 'exit');
    }
  });

  it('never writes the Authorization header or a token, valid or not', async () => {
    const rejected = 'not-a-real-token-but-a-secret-anyway';
    expect((await createPlant({ authorization: `Bearer ${rejected}` })).status).toBe(401);
    const inQuery = await send(`${url}/plants?access_token=${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(inQuery.status).toBe(401);
    await createPlant({ authorization: `Bearer ${token}`, 'x-request-id': 'log-test-2' });
    await expect
      .poll(() => service.logLines().some((l) => l.requestId === 'log-test-2'))
      .toBe(true);

    const { stdout, stderr } = service.output;
    expect(service.logLines().length).toBeGreaterThan(5);
    for (const secret of [token, rejected]) {
      expect(stdout).not.toContain(secret);
      expect(stderr).not.toContain(secret);
    }
  });

  it('honours LOG_LEVEL: at warn, start-up and requests write nothing, warnings do', async () => {
    const port = await freePort();
    const quiet = new ServiceProcess({
      DATABASE_URL: database.url,
      LOG_LEVEL: 'warn',
      PORT: String(port),
    });
    try {
      const live = () =>
        send(`http://127.0.0.1:${port}/health/live`).then(
          (response) => response.status,
          () => 0,
        );
      await expect.poll(live, { timeout: 20_000 }).toBe(200);
      expect(quiet.output.stdout).toBe('');
      // Two different signals, which the kernel never merges (it may reorder them).
      quiet.signal('SIGTERM');
      quiet.signal('SIGINT');
      const exit = await quiet.exited;
      const lines = quiet.logLines();
      expect(lines).toEqual([
        expect.objectContaining({
          level: 'warn',
          msg: expect.stringMatching(/^SIG(INT|TERM) again/),
        }),
      ]);
      const second = String(lines[0].msg).startsWith('SIGINT') ? 130 : 143;
      expect(exit).toEqual({ code: second, signal: null });
    } finally {
      await quiet.stop();
    }
  });
});
