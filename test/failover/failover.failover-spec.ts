import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  freePort,
  issueToken,
  runTokenCli,
  send,
  startService,
  type ServiceProcess,
} from '../support/built-service.js';
import { PostgresServers, type PostgresServer } from '../support/debian-postgres.js';
import { MovingEndpoint } from '../support/moving-endpoint.js';
import { verifySignature, WebhookReceiver } from '../support/webhook-receiver.js';

const REPLICAS = 2;
const CREATES_PER_SECOND = 40;
const READS_PER_SECOND = 20;
/**
 * The longest any request may wait: DATABASE_CONNECT_TIMEOUT_MS (3 s) and
 * DATABASE_STATEMENT_TIMEOUT_MS (5 s) once each, a second of margin, and a second for two
 * shared cores.
 */
const REQUEST_BOUND_MS = 10_000;
/** The test gives up on a request this long after it was sent, and records it as hung. */
const HUNG_AFTER_MS = REQUEST_BOUND_MS + 5_000;
/** What the issue asks: creates answer 200 again within this of the promotion. */
const RECOVERY_LIMIT_MS = 5_000;
/** From the kill to the endpoint's move: a DNS TTL, or a Service's endpoints update. */
const MOVE_AFTER_KILL_MS = 500;
/** From the move to the promotion: the standby serves the endpoint, read-only, meanwhile. */
const PROMOTE_AFTER_MOVE_MS = 2_000;
/** How long the endpoint leads to the old primary brought back read-only. */
const READ_ONLY_MS = 4_000;
/** Requests this close to a move may meet either server. */
const MOVE_MARGIN_MS = 1_000;
/** A read is of a plant acknowledged at least this long before: an async standby has it. */
const READ_AFTER_MS = 1_000;
/**
 * What the issue asks: every acknowledged create is delivered within this of the promotion
 * (or of its 200, if later). A claim that committed as the endpoint moved (or the primary
 * died), its answer lost with the connection, used to wait out its lease (2 ×
 * WEBHOOK_TIMEOUT_MS, 5 s, and 30 s); the worker now ends its own leases once the database
 * answers again.
 */
const DELIVERED_AFTER_RECOVERY_MS = 5_000;
/** How long the test waits for every delivery, to say which did not come rather than time out. */
const DELIVERY_LIMIT_MS = 50_000;
const DATABASE = 'plant_store';

const nameOf = (id: number) => `plant ${id}`;

/** One request, and how it was answered. */
interface Sent {
  kind: 'create' | 'read';
  id: number;
  /** performance.now() when it was sent, and when its answer (or error) came. */
  sentAt: number;
  answeredAt: number;
  /** undefined: no answer (the error, or the hang, is in `body`). */
  status: number | undefined;
  retryAfter: string | undefined;
  body: string;
}

/**
 * Creates at CREATES_PER_SECOND and reads at READS_PER_SECOND, spread over the replicas in
 * turn, each sent once on a connection of its own: a retry would hide a failure.
 */
class SteadyLoad {
  /** Each create answered 200: its id, and when it was answered. */
  readonly acknowledged: Array<{ id: number; at: number }> = [];
  private pending: Promise<Sent>[] = [];
  private nextId = 1;
  private turn = 0;
  private readonly pace: NodeJS.Timeout;

  constructor(
    private readonly urls: string[],
    private readonly token: string,
  ) {
    const tick = 1_000 / CREATES_PER_SECOND;
    let ticks = 0;
    this.pace = setInterval(() => {
      this.pending.push(this.create());
      if (++ticks % (CREATES_PER_SECOND / READS_PER_SECOND) === 0) {
        const read = this.read();
        if (read) this.pending.push(read);
      }
    }, tick);
  }

  /** Every request sent since the last take, once each is answered or given up. */
  take(): Promise<Sent[]> {
    return Promise.all(this.pending.splice(0));
  }

  stop(): Promise<Sent[]> {
    clearInterval(this.pace);
    return this.take();
  }

  private url(): string {
    return this.urls[this.turn++ % this.urls.length];
  }

  private async create(): Promise<Sent> {
    const id = this.nextId++;
    const sent = await this.send('create', id, `${this.url()}/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id, name: nameOf(id) }),
    });
    if (sent.status === 200) this.acknowledged.push({ id, at: sent.answeredAt });
    return sent;
  }

  private read(): Promise<Sent> | undefined {
    const settled = performance.now() - READ_AFTER_MS;
    const readable = this.acknowledged.filter(({ at }) => at < settled);
    if (readable.length === 0) return undefined;
    const { id } = readable[Math.floor(Math.random() * readable.length)];
    return this.send('read', id, `${this.url()}/plants/${id}`, {
      headers: { authorization: `Bearer ${this.token}` },
    });
  }

  private async send(
    kind: Sent['kind'],
    id: number,
    url: string,
    options: Parameters<typeof send>[1],
  ): Promise<Sent> {
    const sentAt = performance.now();
    const answer = await Promise.race([
      send(url, options),
      sleep(HUNG_AFTER_MS, undefined, { ref: false }).then(
        () => new Error(`no answer within ${HUNG_AFTER_MS} ms`),
      ),
    ]).catch((error: Error) => error);
    const answeredAt = performance.now();
    if (answer instanceof Error) {
      const failed = { status: undefined, retryAfter: undefined, body: answer.message };
      return { kind, id, sentAt, answeredAt, ...failed };
    }
    const retryAfter = answer.headers['retry-after'];
    return {
      kind,
      id,
      sentAt,
      answeredAt,
      status: answer.status,
      retryAfter: Array.isArray(retryAfter) ? retryAfter.join() : retryAfter,
      body: answer.body,
    };
  }
}

/** Each request that was not answered as it should be, in words: none is expected. */
function misanswered(requests: Sent[]): string[] {
  return requests.flatMap(({ kind, id, sentAt, answeredAt, status, retryAfter, body }) => {
    const ms = Math.round(answeredAt - sentAt);
    const said = `${kind} ${id}: ${status ?? 'no answer'} ${retryAfter ?? ''} in ${ms} ms: ${body}`;
    if (ms > REQUEST_BOUND_MS) return [said];
    if (status === 200) {
      // A create answers the plant's content, a read its id too.
      const plant = JSON.parse(body) as { id?: number; name: string };
      return plant.name === nameOf(id) && (kind === 'create' || plant.id === id) ? [] : [said];
    }
    const error = status === 503 ? (JSON.parse(body) as Record<string, unknown>) : {};
    const inShape =
      error.error === 503 && typeof error.message === 'string' && Object.keys(error).length === 2;
    return inShape && retryAfter !== undefined && retryAfter !== '' ? [] : [said];
  });
}

const creates = (requests: Sent[]) => requests.filter(({ kind }) => kind === 'create');
const reads = (requests: Sent[]) => requests.filter(({ kind }) => kind === 'read');
const sentBetween = (requests: Sent[], from: number, to: number) =>
  requests.filter(({ sentAt }) => sentAt >= from && sentAt < to);
const statuses = (requests: Sent[]) =>
  requests.reduce<Record<string, number>>((counts, { status }) => {
    const key = String(status ?? 'no answer');
    return { ...counts, [key]: (counts[key] ?? 0) + 1 };
  }, {});
const ms = (value: number) => Math.round(value);

/**
 * A failover as a managed database or an operator (CloudNativePG, Patroni) runs one, on
 * real servers: a primary and a synchronous standby of Debian's PostgreSQL 15, the
 * service's replicas reaching the primary through an endpoint that moves, webhook
 * subscriptions, steady creates and reads. The primary is killed (kill -9), the endpoint
 * moves to the standby before it is promoted, and it is promoted 2 s later. Then the old
 * primary comes back as a standby of the new one, and the endpoint leads there for a while.
 */
describe('failover under load: kill -9 of the primary, the endpoint moved to the standby, promoted 2 s later', () => {
  let servers: PostgresServers;
  let primary: PostgresServer;
  let standby: PostgresServer;
  let endpoint: MovingEndpoint;
  const replicas: Array<{ service: ServiceProcess; url: string; exited: boolean }> = [];
  const receivers: WebhookReceiver[] = [];
  /** Each receiver's subscription secret, in the receivers' order. */
  const secrets: string[] = [];
  let token: string;
  let load: SteadyLoad | undefined;
  /**
   * Each part's requests and when the database was back for them (the promotion, the
   * endpoint's move back): the test after it checks their creates were kept and delivered,
   * whatever else that part's test found.
   */
  const parts: Record<string, { requests: Sent[]; recoveredAt: number }> = {};

  beforeAll(async () => {
    servers = await PostgresServers.create();
    const [primaryPort, standbyPort] = [await freePort(), await freePort()];
    primary = await servers.primary('primary', primaryPort, {});
    await primary.query(`CREATE DATABASE ${DATABASE}`);
    // The standby waits for none once promoted (no standby is left to wait for), as
    // Patroni's synchronous mode, not strict, does.
    standby = await servers.standbyOf(primary, 'standby', standbyPort, {
      synchronous_standby_names: '',
    });
    // From now on a commit is acknowledged once it is on the standby too (synchronous_commit
    // is on by default); set now, since until the standby is there no commit could finish.
    await primary.query("ALTER SYSTEM SET synchronous_standby_names = '*'");
    await primary.query('SELECT pg_reload_conf()');
    const replicating = () =>
      primary.query("SELECT 1 FROM pg_stat_replication WHERE sync_state = 'sync'");
    for (const deadline = Date.now() + 10_000; (await replicating()).length === 0;) {
      if (Date.now() > deadline) throw new Error('the standby did not become synchronous');
      await sleep(100);
    }

    endpoint = await MovingEndpoint.start(primary.port);
    const env = {
      DATABASE_URL: `postgres://postgres@127.0.0.1:${endpoint.port}/${DATABASE}`,
      RATE_LIMIT_PER_MINUTE: '1000000',
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
    };
    const started = await Promise.allSettled(
      Array.from({ length: REPLICAS }, () => startService(env, { forgetOutput: 'request lines' })),
    );
    for (const outcome of started) {
      if (outcome.status === 'rejected') continue;
      const replica = { ...outcome.value, exited: false };
      void replica.service.exited.then(() => (replica.exited = true));
      replicas.push(replica);
    }
    // Thrown once every replica that started is in `replicas`, which afterAll stops.
    const failed = started.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;

    const direct = primary.url(DATABASE);
    token = await issueToken(direct, 'load');
    const hooks = await runTokenCli(['create', '--name', 'hooks', '--scopes', 'webhooks:manage'], {
      DATABASE_URL: direct,
    });
    expect(hooks.code, hooks.stderr).toBe(0);
    for (let index = 0; index < 2; index++) {
      const receiver = await WebhookReceiver.start();
      receivers.push(receiver);
      const { status, body } = await send(`${replicas[index % REPLICAS].url}/webhooks`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${hooks.stdout.trim()}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ url: receiver.url }),
      });
      expect(status, body).toBe(201);
      secrets.push((JSON.parse(body) as { secret: string }).secret);
    }
    load = new SteadyLoad(
      replicas.map(({ url }) => url),
      token,
    );
  });

  afterAll(async () => {
    await load?.stop();
    await Promise.all(replicas.map(({ service }) => service.stop()));
    for (const receiver of receivers) await receiver.stop();
    await endpoint?.stop();
    await servers?.remove();
  });

  /**
   * Every create acknowledged among `requests` is on the new primary as it was sent, and
   * was delivered, signed, to both receivers within DELIVERED_AFTER_RECOVERY_MS of
   * `recoveredAt` (the promotion, or the endpoint's move back to the primary) or of its
   * 200, whichever is later. Prints how long the deliveries took, from the 200.
   */
  async function expectKeptAndDelivered(part: string, requests: Sent[], recoveredAt: number) {
    const acknowledged = new Map(
      creates(requests)
        .filter(({ status }) => status === 200)
        .map(({ id, answeredAt }) => [id, answeredAt]),
    );
    expect(acknowledged.size).toBeGreaterThan(0);
    const rows = await standby.query<{ id: string; name: string }>(
      'SELECT id::text, name FROM plants WHERE id = ANY($1::bigint[])',
      [[...acknowledged.keys()]],
      DATABASE,
    );
    const stored = new Map(rows.map(({ id, name }) => [Number(id), name]));
    expect([...acknowledged.keys()].filter((id) => stored.get(id) !== nameOf(id))).toEqual([]);

    /** Each receiver's first delivery of each acknowledged plant: when it came, by id. */
    const firstDeliveries = () =>
      receivers.map((receiver) => {
        const firsts = new Map<number, number>();
        for (const { body, receivedAt } of receiver.received) {
          const { id } = JSON.parse(body) as { id: number };
          if (acknowledged.has(id) && !firsts.has(id)) firsts.set(id, receivedAt);
        }
        return firsts;
      });
    const deadline = Date.now() + DELIVERY_LIMIT_MS;
    while (
      firstDeliveries().some((firsts) => firsts.size < acknowledged.size) &&
      Date.now() < deadline
    ) {
      await sleep(100);
    }
    const delivered = firstDeliveries();
    const latencies = delivered.flatMap((firsts) =>
      [...firsts].map(([id, receivedAt]) => receivedAt - acknowledged.get(id)!),
    );
    /** How long after the recovery, or after its 200 if later, each delivery came. */
    const afterRecovery = delivered.map((firsts) =>
      [...firsts].map(
        ([id, receivedAt]) =>
          [id, receivedAt - Math.max(recoveredAt, acknowledged.get(id)!)] as const,
      ),
    );
    console.info(
      JSON.stringify({
        part,
        createsAcknowledged: acknowledged.size,
        deliveries: delivered.map((firsts) => firsts.size),
        deliveriesOver5s: latencies.filter((latency) => latency > 5_000).map(ms),
        slowestDeliveryMs: ms(Math.max(...latencies)),
        slowestAfterRecoveryMs: ms(Math.max(...afterRecovery.flat().map(([, after]) => after))),
        // Each replica's releases of leases whose claim's answer it lost, so far.
        leasesReleased: replicas.map(
          ({ service }) =>
            service
              .logLines()
              .filter(({ msg }) => String(msg).endsWith('not being sent are due again')).length,
        ),
      }),
    );
    const undelivered = delivered.map((firsts) =>
      [...acknowledged.keys()].filter((id) => !firsts.has(id)),
    );
    // Where each undelivered plant stands in the outbox, to say why.
    const outbox =
      undelivered.flat().length === 0
        ? []
        : await standby.query(
            `SELECT 'delivery' AS row, payload, status, attempts,
              round(extract(epoch FROM next_attempt_at - now()) * 1000) AS due_in_ms
       FROM webhook_deliveries WHERE (payload::jsonb ->> 'id')::bigint = ANY($1::bigint[])
       UNION ALL
       SELECT 'event', payload, NULL, NULL, NULL
       FROM webhook_events WHERE (payload::jsonb ->> 'id')::bigint = ANY($1::bigint[])`,
            [[...new Set(undelivered.flat())]],
            DATABASE,
          );
    expect(undelivered, JSON.stringify(outbox)).toEqual(receivers.map(() => []));
    const late = afterRecovery.map((deliveries) =>
      deliveries.flatMap(([id, after]) =>
        after > DELIVERED_AFTER_RECOVERY_MS ? [`plant ${id}: ${ms(after)} ms`] : [],
      ),
    );
    expect(late).toEqual(receivers.map(() => []));
    receivers.forEach((receiver, index) => {
      for (const delivery of receiver.received) verifySignature(secrets[index], delivery);
    });
  }

  const acceptsWritesGauges = () =>
    Promise.all(
      replicas.map(
        async ({ url }) =>
          /^db_accepts_writes (\d)$/m.exec((await send(`${url}/metrics`)).body)?.[1],
      ),
    );

  it(`keeps every acknowledged create and delivers its webhooks, answers the rest 503 with Retry-After within ${REQUEST_BOUND_MS / 1_000} s, and creates again within ${RECOVERY_LIMIT_MS / 1_000} s of the promotion, with no restart`, async () => {
    await sleep(2_000);
    const killedAt = performance.now();
    await primary.kill();
    await sleep(MOVE_AFTER_KILL_MS);
    endpoint.moveTo(standby.port);
    const movedAt = performance.now();
    await sleep(PROMOTE_AFTER_MOVE_MS);
    const promotingAt = performance.now();
    await standby.promote();
    const promotedAt = performance.now();
    await sleep(RECOVERY_LIMIT_MS + 2_000);
    const requests = await load!.take();
    parts.failover = { requests, recoveredAt: promotedAt };

    const created = creates(requests);
    const failed = created.filter(({ status }) => status !== 200);
    const firstFailure = Math.min(...failed.map(({ sentAt }) => sentAt));
    const firstAfter = Math.min(
      ...created
        .filter(({ status, answeredAt }) => status === 200 && answeredAt > promotingAt)
        .map(({ answeredAt }) => answeredAt),
    );
    const since = (at: number) => ms(at - killedAt);
    console.info(
      JSON.stringify({
        part: 'failover',
        msFromKill: {
          endpointMoved: since(movedAt),
          promoteIssued: since(promotingAt),
          promoted: since(promotedAt),
          firstCreateRefused: since(firstFailure),
          firstCreateAnswered200AfterPromotion: since(firstAfter),
        },
        outageMs: ms(firstAfter - firstFailure),
        recoveryMs: ms(firstAfter - promotingAt),
        createsSent: {
          toTheKilledPrimary: statuses(sentBetween(created, killedAt, movedAt)),
          toTheStandby: statuses(sentBetween(created, movedAt, promotingAt)),
          afterThePromotion: statuses(sentBetween(created, promotingAt, Infinity)),
        },
        creates: statuses(created),
        reads: statuses(reads(requests)),
        slowestAnswerMs: ms(Math.max(...requests.map((r) => r.answeredAt - r.sentAt))),
        loadAverage: loadavg()[0],
      }),
    );

    expect(misanswered(requests)).toEqual([]);
    expect(failed.length).toBeGreaterThan(0);
    expect(firstAfter - promotingAt).toBeLessThanOrEqual(RECOVERY_LIMIT_MS);
    const afterRecovery = sentBetween(created, promotingAt + RECOVERY_LIMIT_MS, Infinity);
    expect(afterRecovery.length).toBeGreaterThan(CREATES_PER_SECOND);
    expect(afterRecovery.filter(({ status }) => status !== 200)).toEqual([]);
    expect(replicas.map(({ exited }) => exited)).toEqual(replicas.map(() => false));
  });

  it(`keeps every create acknowledged across the failover and delivers it within ${DELIVERED_AFTER_RECOVERY_MS / 1_000} s of the promotion`, async () => {
    expect(parts.failover).toBeDefined();
    await expectKeptAndDelivered('failover', parts.failover.requests, parts.failover.recoveredAt);
  });

  it('answers writes 503 and serves reads while the endpoint leads to the old primary, brought back as a standby of the new one, and creates again once it leads back', async () => {
    // The old primary's data went with it: it comes back as a new standby, on its port.
    const oldPrimary = await servers.standbyOf(standby, 'primary', primary.port, {});
    await load!.take();
    await sleep(1_000);
    endpoint.moveTo(oldPrimary.port);
    const readOnlyAt = performance.now();
    // Each replica has met the read-only server (the load alternates between them).
    await expect
      .poll(acceptsWritesGauges, { timeout: READ_ONLY_MS, interval: 100 })
      .toEqual(replicas.map(() => '0'));
    await sleep(READ_ONLY_MS - (performance.now() - readOnlyAt));
    endpoint.moveTo(standby.port);
    const backAt = performance.now();
    await sleep(RECOVERY_LIMIT_MS + 2_000);
    const requests = await load!.stop();
    parts.readOnly = { requests, recoveredAt: backAt };

    const created = creates(requests);
    const whileReadOnly = sentBetween(
      requests,
      readOnlyAt + MOVE_MARGIN_MS / 2,
      backAt - MOVE_MARGIN_MS,
    );
    const firstAfter = Math.min(
      ...created
        .filter(({ status, answeredAt }) => status === 200 && answeredAt > backAt)
        .map(({ answeredAt }) => answeredAt),
    );
    console.info(
      JSON.stringify({
        part: 'old primary back, read-only',
        readOnlyMs: ms(backAt - readOnlyAt),
        whileReadOnly: {
          creates: statuses(creates(whileReadOnly)),
          reads: statuses(reads(whileReadOnly)),
        },
        createsAnswered200AfterMovingBackMs: ms(firstAfter - backAt),
        creates: statuses(created),
        reads: statuses(reads(requests)),
        slowestAnswerMs: ms(Math.max(...requests.map((r) => r.answeredAt - r.sentAt))),
        loadAverage: loadavg()[0],
      }),
    );

    expect(misanswered(requests)).toEqual([]);
    expect(creates(whileReadOnly).length).toBeGreaterThan(CREATES_PER_SECOND);
    expect(creates(whileReadOnly).filter(({ status }) => status !== 503)).toEqual([]);
    const readsWhileReadOnly = sentBetween(
      reads(whileReadOnly),
      readOnlyAt + MOVE_MARGIN_MS,
      Infinity,
    );
    expect(readsWhileReadOnly.length).toBeGreaterThan(READS_PER_SECOND);
    expect(readsWhileReadOnly.filter(({ status }) => status !== 200)).toEqual([]);
    expect(firstAfter - backAt).toBeLessThanOrEqual(RECOVERY_LIMIT_MS);
    const afterRecovery = sentBetween(created, backAt + RECOVERY_LIMIT_MS, Infinity);
    expect(afterRecovery.length).toBeGreaterThan(CREATES_PER_SECOND);
    expect(afterRecovery.filter(({ status }) => status !== 200)).toEqual([]);
    expect(await acceptsWritesGauges()).toEqual(replicas.map(() => '1'));
    expect(replicas.map(({ exited }) => exited)).toEqual(replicas.map(() => false));
  });

  it(`keeps every create acknowledged while the old primary was back and delivers it within ${DELIVERED_AFTER_RECOVERY_MS / 1_000} s of the move back`, async () => {
    expect(parts.readOnly).toBeDefined();
    await expectKeptAndDelivered(
      'old primary back, read-only',
      parts.readOnly.requests,
      parts.readOnly.recoveredAt,
    );
  });
});
