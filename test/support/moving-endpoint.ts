import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP endpoint on loopback that leads to one server at a time and can be moved, as a
 * managed database's DNS name or a Kubernetes Service moves in a failover: new connections
 * go where it now leads, and the connections made through it before the move are cut (a
 * Service's endpoints change, kube-proxy's conntrack entries go). A connection to a
 * server that refuses it is reset, as a Service with no ready endpoint does.
 */
export class MovingEndpoint {
  private readonly pairs = new Set<[Socket, Socket]>();

  private constructor(
    private readonly server: Server,
    private target: number,
  ) {
    server.on('connection', (client) => this.lead(client));
  }

  /** Listens on a free loopback port, leading to `targetPort` on loopback. */
  static async start(targetPort: number): Promise<MovingEndpoint> {
    const server = createServer();
    await new Promise<void>((resolve, reject) =>
      server.once('error', reject).listen(0, '127.0.0.1', resolve),
    );
    return new MovingEndpoint(server, targetPort);
  }

  get port(): number {
    return (this.server.address() as { port: number }).port;
  }

  /** The port it leads to now. */
  get leadsTo(): number {
    return this.target;
  }

  /** From now on it leads to `targetPort`; every connection made before is cut. */
  moveTo(targetPort: number): void {
    this.target = targetPort;
    for (const [client, upstream] of this.pairs) {
      client.resetAndDestroy();
      upstream.destroy();
    }
    this.pairs.clear();
  }

  async stop(): Promise<void> {
    this.moveTo(this.target);
    await new Promise((resolve) => this.server.close(resolve));
  }

  private lead(client: Socket): void {
    const upstream = createConnection({ host: '127.0.0.1', port: this.target });
    const pair: [Socket, Socket] = [client, upstream];
    this.pairs.add(pair);
    const cut = () => {
      this.pairs.delete(pair);
      if (!client.destroyed) client.resetAndDestroy();
      upstream.destroy();
    };
    client.on('error', cut).on('close', cut);
    upstream.on('error', cut).on('close', cut);
    client.pipe(upstream);
    upstream.pipe(client);
  }
}
