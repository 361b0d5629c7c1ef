import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { Webhook } from 'standardwebhooks';

export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  body: string;
  /** When it had arrived whole (performance.now()). */
  receivedAt: number;
}

/** How the receiver answers a delivery: a status, or never ('hang'). */
export type Answer = number | 'hang';

/**
 * A webhook receiver on loopback, as a subscriber runs one: it keeps every request it got
 * and answers as `answer` says (200 unless told otherwise).
 */
export class WebhookReceiver {
  readonly received: ReceivedDelivery[] = [];
  answer: (delivery: ReceivedDelivery) => Answer = () => 200;
  private server: Server | undefined;

  private constructor(readonly port: number) {}

  /** Listens on `port` (0: any free one). */
  static async start(port = 0): Promise<WebhookReceiver> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    const receiver = new WebhookReceiver((server.address() as { port: number }).port);
    receiver.serve(server);
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/plant/webhook`;
  }

  /** Stops listening; the port stays this receiver's, for `restart`. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  }

  async restart(): Promise<void> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.serve(server);
  }

  /** Resolves once `count` deliveries have arrived; rejects after `timeoutMs`. */
  async waitFor(count: number, timeoutMs = 20_000): Promise<ReceivedDelivery[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.received.length < count) {
      if (Date.now() > deadline) {
        throw new Error(`${this.received.length} deliveries arrived of ${count} awaited`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return this.received;
  }

  private serve(server: Server): void {
    this.server = server;
    server.on('request', (request, response) => {
      let body = '';
      request.setEncoding('utf8');
      request.on('data', (chunk: string) => (body += chunk));
      request.on('end', () => {
        const delivery = { headers: request.headers, body, receivedAt: performance.now() };
        this.received.push(delivery);
        const answer = this.answer(delivery);
        if (answer !== 'hang') response.writeHead(answer).end();
      });
    });
  }
}

/**
 * Checks a delivery's signature with the Standard Webhooks reference package, as a
 * subscriber would (never with the service's own code); throws when it is not valid.
 */
export function verifySignature(secret: string, { headers, body }: ReceivedDelivery): void {
  new Webhook(secret).verify(body, {
    'webhook-id': String(headers['webhook-id']),
    'webhook-timestamp': String(headers['webhook-timestamp']),
    'webhook-signature': String(headers['webhook-signature']),
  });
}

/** From each plant's 200 (`answeredAt`, by id) to the receipt of its delivery, in ms. */
export function deliveryLatencies(
  received: ReceivedDelivery[],
  answeredAt: ReadonlyMap<number, number>,
): number[] {
  return received.map(
    ({ body, receivedAt }) => receivedAt - answeredAt.get((JSON.parse(body) as { id: number }).id)!,
  );
}

/**
 * Issue 26's goal at 100 creates a second, from a create's 200 to the receipt, and what the
 * tests assert: the goal and a margin for the CI's two shared cores, where another process's
 * burst lands in the tail (one run in five on one service measured a p99 of 127 ms at a load
 * average of 3, the others 41–83 ms), and, with three replicas through PgBouncer, in the
 * median too (20.9 ms once at a load average of 2.2, 4–16 ms otherwise). The margins still
 * fail a worker that waits for its poll (1 s). bench/README.md compares the figures the
 * tests print with the goal itself.
 */
export const DELIVERY_LATENCY_GOAL = {
  perSecond: 100,
  creates: 1_000,
  p50Ms: 20,
  p50AssertedMs: 30,
  p99Ms: 100,
  p99AssertedMs: 150,
};
