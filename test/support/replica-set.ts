import {
  freePort,
  startService,
  type Exit,
  type ServiceOptions,
  type ServiceProcess,
} from './built-service.js';
import { startHaproxy, type Balancer } from './haproxy.js';

export interface Replica {
  service: ServiceProcess;
  url: string;
}

/**
 * Replicas of the built service, started together with one environment, behind HAProxy.
 * Each replica has a server slot in the balancer: a loopback port chosen for it.
 */
export class ReplicaSet {
  private constructor(
    /** The replica in each server slot now. */
    readonly replicas: Replica[],
    readonly balancer: Balancer,
    private readonly env: Record<string, string>,
    private readonly options: ServiceOptions,
  ) {}

  static async start(
    count: number,
    env: Record<string, string>,
    options: ServiceOptions = {},
  ): Promise<ReplicaSet> {
    const ports = await Promise.all(Array.from({ length: count }, () => freePort()));
    const started = await Promise.allSettled(
      ports.map((port) => startService({ ...env, PORT: String(port) }, options)),
    );
    const replicas = started.flatMap((outcome) =>
      outcome.status === 'fulfilled' ? [outcome.value] : [],
    );
    try {
      const failed = started.find((outcome) => outcome.status === 'rejected');
      if (failed) throw failed.reason;
      const balancer = await startHaproxy(replicas.map(({ url }) => url));
      return new ReplicaSet(replicas, balancer, env, options);
    } catch (error) {
      await Promise.all(replicas.map(({ service }) => service.stop()));
      throw error;
    }
  }

  /**
   * Replaces the replica in slot `index` as a rolling update does: SIGTERM, and once it
   * has exited, a new replica on its port. Resolves with how the old one exited, once the
   * new one listens (HAProxy sends to it once its readiness checks pass).
   */
  async replace(index: number): Promise<Exit> {
    const { service, url } = this.replicas[index];
    service.signal('SIGTERM');
    const exit = await service.exited;
    this.replicas[index] = await startService(
      { ...this.env, PORT: new URL(url).port },
      this.options,
    );
    return exit;
  }

  async stop(): Promise<void> {
    await this.balancer.stop();
    await Promise.all(this.replicas.map(({ service }) => service.stop()));
  }
}
