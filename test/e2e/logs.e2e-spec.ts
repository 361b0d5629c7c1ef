import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import { stripVTControlCharacters } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
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
import { describeOnEmbeddedRun, type TestDatabase } from '../support/test-database.js';

describeOnEmbeddedRun('structured logs (the built service)', () => {
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

  it('logs a create whose client left before the answer as abandoned: 499, with the time it was held', async () => {
    // A slow create: its insert waits for this transaction's lock on the table.
    const locker = new pg.Client({ connectionString: database.adminUrl });
    await locker.connect();
    const request = httpRequest(`${url}/plants`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'x-request-id': 'log-abandoned',
      },
      agent: false,
    });
    // The hang-up the client sees is what the test does to it.
    request.on('error', () => undefined);
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE plants IN ACCESS EXCLUSIVE MODE');
      request.end(JSON.stringify({ id: 4242, name: 'Abandoned fern' }));
      const insertWaiting = async () =>
        (
          await database.query<{ waiting: number }>(
            `SELECT count(*)::integer AS waiting FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock'`,
          )
        )[0].waiting;
      await expect.poll(insertWaiting, { timeout: 10_000 }).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 300));
      request.destroy();
      const lineOf = () => service.logLines().find((l) => l.requestId === 'log-abandoned');
      await expect.poll(lineOf).toBeDefined();
      expect(lineOf()).toMatchObject({
        level: 'info',
        msg: 'request abandoned',
        method: 'POST',
        route: '/plants',
        status: 499,
        aborted: true,
        tokenName: 'ops-test',
      });
      expect(lineOf()!.durationMs).toBeGreaterThanOrEqual(300);
      expect((await send(`${url}/metrics`)).body).toMatch(
        /^http_requests_total\{method="POST",route="\/plants",status="499"\} 1$/m,
      );
    } finally {
      await locker.query('COMMIT');
      await locker.end();
    }
    // The create itself goes on once the lock is gone; its line stays the only one.
    await expect
      .poll(() => database.query('SELECT id FROM plants WHERE id = 4242'))
      .toHaveLength(1);
    expect(service.logLines().filter((l) => l.requestId === 'log-abandoned')).toHaveLength(1);
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
      const proxied = await startService({ ...database.env, TRUST_PROXY: trustProxy });
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
      ...database.env,
      PORT: String(port),
      LOG_LEVEL: 'info',
    });
    let shown = '';
    terminal.stdout!.on('data', (chunk: Buffer) => (shown += chunk.toString()));
    // Without its colours, as a person reads it.
    const text = () => stripVTControlCharacters(shown);
    try {
      await expect
        .poll(text, { timeout: 20_000 })
        .toMatch(/INFO: \[Http\] plant-store \S+ \(\S+\) listening on http/);
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
      ...database.env,
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
