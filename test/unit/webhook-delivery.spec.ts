import { createServer, type RequestListener, type Server } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { AppConfig } from '../../src/config/app-config.js';
import type {
  ChannelListener,
  DatabaseNotifications,
} from '../../src/database/database-notifications.js';
import { WebhookDeliveryWorker } from '../../src/webhooks/delivery/webhook-delivery.worker.js';
import type { WebhookMetrics } from '../../src/webhooks/delivery/webhook-metrics.js';
import { retryDelayMs } from '../../src/webhooks/delivery/retry-schedule.js';
import {
  type Attempt,
  RESPONSE_LIMIT_BYTES,
  sendAttempt,
} from '../../src/webhooks/delivery/webhook-sender.js';
import {
  ReceiverAddressPolicy,
  ReceiverRefusedError,
} from '../../src/webhooks/receiver-address.js';
import { parseReceiverUrl } from '../../src/webhooks/receiver-url.js';
import { generateSigningSecret, signDelivery } from '../../src/webhooks/webhook-signature.js';
import type { WebhooksRepository } from '../../src/webhooks/webhooks.repository.js';

describe('signDelivery', () => {
  it('signs as the Standard Webhooks reference package verifies', () => {
    const secret = generateSigningSecret();
    const body = '{"id":9223372036854775807,"name":"Monstera"}';
    const headers = signDelivery([secret], 'msg-1', new Date(), body);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(() => new Webhook(secret).verify(body, { ...headers })).not.toThrow();
    expect(() => new Webhook(secret).verify(`${body} `, { ...headers })).toThrow();
    expect(() => new Webhook(generateSigningSecret()).verify(body, { ...headers })).toThrow();
  });

  it('signs with each secret, space-separated, so that a receiver holding either one verifies', () => {
    const [current, previous] = [generateSigningSecret(), generateSigningSecret()];
    const body = '{"id":1,"name":"Fern"}';
    const headers = signDelivery([current, previous], 'msg-2', new Date(), body);
    expect(headers['webhook-signature']).toMatch(/^v1,\S{44} v1,\S{44}$/);
    expect(() => new Webhook(current).verify(body, { ...headers })).not.toThrow();
    expect(() => new Webhook(previous).verify(body, { ...headers })).not.toThrow();
    expect(() => new Webhook(generateSigningSecret()).verify(body, { ...headers })).toThrow();
  });
});

describe('retryDelayMs', () => {
  it('triples each wait, within ±25 % jitter', () => {
    expect(retryDelayMs(1, 10_000, 0.5)).toBe(10_000);
    expect(retryDelayMs(2, 10_000, 0.5)).toBe(30_000);
    expect(retryDelayMs(3, 10_000, 0)).toBe(67_500);
    expect(retryDelayMs(3, 10_000, 0.999999)).toBe(112_500);
  });

  it('never waits more than a day and a quarter', () => {
    expect(retryDelayMs(30, 3_600_000, 0.999999)).toBeLessThanOrEqual(108_000_000);
    expect(retryDelayMs(30, 3_600_000, 0)).toBe(64_800_000);
  });

  it('spreads 10 attempts from 10 s over about a day', () => {
    const waits = Array.from({ length: 9 }, (_, index) => retryDelayMs(index + 1, 10_000, 0.5));
    const hours = waits.reduce((sum, wait) => sum + wait, 0) / 3_600_000;
    expect(hours).toBeGreaterThan(20);
    expect(hours).toBeLessThan(36);
  });
});

describe('ReceiverAddressPolicy', () => {
  const none = new ReceiverAddressPolicy([], 2_000);

  it('accepts a public address and connects to it', async () => {
    await expect(none.resolve(new URL('https://93.184.215.14/'))).resolves.toEqual({
      address: '93.184.215.14',
      family: 4,
    });
    await expect(none.resolve(new URL('http://[2606:4700::1111]/'))).resolves.toEqual({
      address: '2606:4700::1111',
      family: 6,
    });
  });

  it.each([
    'http://127.0.0.1/',
    'http://[::1]/',
    'http://[::ffff:10.0.0.1]/',
    'http://172.16.0.1/',
    'http://169.254.169.254/',
    'http://[fe80::1]/',
    'http://[fd00:ec2::254]/',
    'http://224.0.0.1/',
    'http://[64:ff9b::a00:1]/',
  ])('refuses %s', async (url) => {
    await expect(none.resolve(new URL(url))).rejects.toThrow(ReceiverRefusedError);
  });

  it.each([
    ['http://[::127.0.0.1]/', '::7f00:1 (127.0.0.1), a loopback address'],
    ['http://[::169.254.169.254]/latest/meta-data', '::a9fe:a9fe (169.254.169.254), a linkLocal'],
    ['http://[::10.0.0.1]/', '::a00:1 (10.0.0.1), a private address'],
    ['http://[::0.0.0.2]/', '::2 (0.0.0.2), a unspecified address'],
    ['http://[::ffff:127.0.0.1]/', '::ffff:7f00:1 (127.0.0.1), a loopback address'],
    ['http://[::ffff:169.254.169.254]/', '::ffff:a9fe:a9fe (169.254.169.254), a linkLocal'],
    ['http://[0:0:0:0:0:ffff:a00:1]/', '::ffff:a00:1 (10.0.0.1), a private address'],
  ])('refuses %s: the IPv4 address it embeds is not public', async (url, why) => {
    await expect(none.resolve(new URL(url))).rejects.toThrow(why);
  });

  it('judges an IPv6 address that embeds a public IPv4 one by that address', async () => {
    await expect(none.resolve(new URL('http://[::ffff:8.8.8.8]/'))).resolves.toEqual({
      address: '::ffff:808:808',
      family: 6,
    });
    await expect(none.resolve(new URL('http://[::8.8.8.8]/'))).resolves.toEqual({
      address: '::808:808',
      family: 6,
    });
  });

  it("keeps IPv6's own loopback and unspecified addresses apart from the embedded IPv4 ones", async () => {
    await expect(none.resolve(new URL('http://[::1]/'))).rejects.toThrow('at ::1, a loopback');
    await expect(none.resolve(new URL('http://[::]/'))).rejects.toThrow('at ::, a unspecified');
  });

  it('allows an embedded IPv4 address that WEBHOOK_ALLOWED_HOSTS names', async () => {
    const allowing = new ReceiverAddressPolicy(['127.0.0.1'], 2_000);
    await expect(allowing.resolve(new URL('http://[::ffff:127.0.0.1]/'))).resolves.toBeDefined();
    await expect(allowing.resolve(new URL('http://[::127.0.0.1]/'))).resolves.toBeDefined();
    await expect(allowing.resolve(new URL('http://[::127.0.0.2]/'))).rejects.toThrow(/loopback/);
  });

  it('allows what WEBHOOK_ALLOWED_HOSTS names, by host name or by address', async () => {
    const allowing = new ReceiverAddressPolicy(
      ['127.0.0.1', '0:0:0:0:0:0:0:1', 'LocalHost'],
      2_000,
    );
    await expect(allowing.resolve(new URL('http://127.0.0.1:8080/'))).resolves.toMatchObject({
      address: '127.0.0.1',
    });
    await expect(allowing.resolve(new URL('http://[::1]/'))).resolves.toMatchObject({
      family: 6,
    });
    await expect(allowing.resolve(new URL('http://localhost/'))).resolves.toBeDefined();
    await expect(allowing.resolve(new URL('http://127.0.0.2/'))).rejects.toThrow(/loopback/);
  });

  it('refuses a host that does not resolve', async () => {
    await expect(none.resolve(new URL('http://no-such-host.invalid/'))).rejects.toThrow(
      /does not resolve/,
    );
  });
});

describe('parseReceiverUrl', () => {
  it.each(['http://8.8.8.8:0/hook', 'https://example.com:00/', 'http://[2606:4700::1111]:0/'])(
    'refuses %s: nothing listens on port 0',
    (url) => {
      expect(() => parseReceiverUrl(url)).toThrow(
        new ReceiverRefusedError('url must not use port 0'),
      );
    },
  );

  it("takes any other port, and the scheme's own when none is given", () => {
    expect(parseReceiverUrl('http://8.8.8.8:1/hook').port).toBe('1');
    expect(parseReceiverUrl('https://example.com:65535/').port).toBe('65535');
    expect(parseReceiverUrl('https://example.com:443/').href).toBe('https://example.com/');
  });
});

describe('sendAttempt', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  });

  const receiverAnswering = async (listener: RequestListener): Promise<Attempt> => {
    server = createServer(listener);
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    return {
      // The host name is never looked up: the attempt connects to the address given.
      url: new URL(`http://receiver.invalid:${port}/hook`),
      address: { address: '127.0.0.1', family: 4 },
      headers: { 'content-type': 'application/json' },
      body: '{"id":1,"name":"x"}',
      timeoutMs: 500,
    };
  };

  it("answers the receiver's status, sending the body to the checked address", async () => {
    let received = '';
    const attempt = await receiverAnswering((request, response) => {
      request.on('data', (chunk: Buffer) => (received += chunk.toString()));
      request.on('end', () => response.writeHead(204).end());
    });
    await expect(sendAttempt(attempt)).resolves.toEqual({ status: 204 });
    expect(received).toBe('{"id":1,"name":"x"}');
  });

  it('does not follow a redirect', async () => {
    const attempt = await receiverAnswering((_request, response) =>
      response.writeHead(307, { location: '/elsewhere' }).end(),
    );
    await expect(sendAttempt(attempt)).resolves.toEqual({ status: 307 });
  });

  it('gives up on a receiver that does not answer in time', async () => {
    const attempt = await receiverAnswering(() => undefined);
    await expect(sendAttempt(attempt)).resolves.toEqual({
      error: 'no complete answer within 500 ms',
    });
  });

  it('reads no more than the response limit of an endless answer', async () => {
    const attempt = await receiverAnswering((_request, response) => {
      response.writeHead(200);
      const chunk = Buffer.alloc(16 * 1024, 'x');
      const pump = () => {
        while (response.write(chunk));
      };
      response.on('drain', pump);
      pump();
    });
    const started = Date.now();
    await expect(sendAttempt({ ...attempt, timeoutMs: 5_000 })).resolves.toEqual({ status: 200 });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(RESPONSE_LIMIT_BYTES).toBe(64 * 1024);
  });
});

describe('WebhookDeliveryWorker, woken by notifications', () => {
  /** A worker on fakes: its claims and fan-outs are counted, each held until released. */
  function worker(env: Record<string, string> = {}) {
    const calls = { fanOut: 0, claimDue: 0 };
    const pending: Array<() => void> = [];
    const held = <T>(value: T) => new Promise<T>((resolve) => pending.push(() => resolve(value)));
    const webhooks = {
      fanOut: () => {
        calls.fanOut++;
        return held(0);
      },
      claimDue: () => {
        calls.claimDue++;
        return held([]);
      },
    } as unknown as WebhooksRepository;
    let listener: ChannelListener | undefined;
    const notifications = {
      listen: (_channel: string, channelListener: ChannelListener) => {
        listener = channelListener;
        return Promise.resolve();
      },
    } as unknown as DatabaseNotifications;
    const config = AppConfig.fromEnvironment({ WEBHOOK_POLL_INTERVAL_MS: '60000', ...env });
    const subject = new WebhookDeliveryWorker(
      webhooks,
      new ReceiverAddressPolicy([], 1_000),
      {} as WebhookMetrics,
      config,
      notifications,
    );
    subject.onApplicationBootstrap();
    /** Lets the statements held so far answer, and the worker take its next turns. */
    const release = async () => {
      for (const answer of pending.splice(0)) answer();
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
    };
    return {
      subject,
      calls,
      release,
      notify: () => listener?.notified(''),
      listener: () => listener,
    };
  }

  it('claims once for a burst of notifications, fanning the new events out first', async () => {
    const { subject, calls, release, notify } = worker();
    for (let index = 0; index < 50; index++) notify();
    await release();
    expect(calls).toEqual({ fanOut: 1, claimDue: 0 });
    await release();
    expect(calls).toEqual({ fanOut: 1, claimDue: 0 });
    await subject.onModuleDestroy();
  });

  it('claims once more after a claim during which notifications arrived', async () => {
    const { subject, calls, release, notify } = worker();
    notify();
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls.fanOut).toBe(1);
    // The claim's snapshot may predate these events.
    for (let index = 0; index < 10; index++) notify();
    await release();
    expect(calls.fanOut).toBe(2);
    await release();
    expect(calls.fanOut).toBe(2);
    await subject.onModuleDestroy();
  });

  it('after a statement failed, ends its own leases on deliveries it is not sending before it claims again', async () => {
    const calls: string[] = [];
    const owners = new Set<string>();
    let failing = true;
    const webhooks = {
      fanOut: () => {
        calls.push('fanOut');
        // The answer lost with the connection: a claim before it may have committed.
        if (failing) return Promise.reject(new Error('Connection terminated unexpectedly'));
        return Promise.resolve(0);
      },
      claimDue: (...args: unknown[]) => {
        calls.push('claimDue');
        owners.add(args[4] as string);
        return Promise.resolve([]);
      },
      releaseLeases: (owner: string, sending: Iterable<string>) => {
        calls.push(`releaseLeases ${[...sending].length}`);
        owners.add(owner);
        return Promise.resolve(3);
      },
    } as unknown as WebhooksRepository;
    let listener: ChannelListener | undefined;
    const notifications = {
      listen: (_channel: string, channelListener: ChannelListener) => {
        listener = channelListener;
        return Promise.resolve();
      },
    } as unknown as DatabaseNotifications;
    const subject = new WebhookDeliveryWorker(
      webhooks,
      new ReceiverAddressPolicy([], 1_000),
      {} as WebhookMetrics,
      AppConfig.fromEnvironment({ WEBHOOK_POLL_INTERVAL_MS: '60000' }),
      notifications,
    );
    subject.onApplicationBootstrap();
    const turn = async () => {
      listener?.notified('');
      for (let index = 0; index < 5; index++) {
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    await turn();
    expect(calls).toEqual(['fanOut']);
    failing = false;
    // Woken for new events, it would fan out first: the released leases are claimed at once.
    await turn();
    expect(calls).toEqual(['fanOut', 'releaseLeases 0', 'claimDue', 'fanOut']);
    // Released once: the next turn is an ordinary one.
    await turn();
    expect(calls.slice(4)).toEqual(['fanOut']);
    // The claims and the release name the same owner: this process.
    expect(owners.size).toBe(1);
    await subject.onModuleDestroy();
  });

  it('does not listen with WEBHOOK_LISTEN=false', async () => {
    const { subject, listener } = worker({ WEBHOOK_LISTEN: 'false' });
    expect(listener()).toBeUndefined();
    await subject.onModuleDestroy();
  });
});
