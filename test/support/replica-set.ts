import { setTimeout as sleep } from 'node:timers/promises';
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

/** How long HAProxy may take to see a server slot change: checks every 250 ms, rise and fall 2. */
const SLOT_CHANGE_LIMIT_MS = 10_000;

/** Resolves once the balancer says the slot is `status`; rejects after SLOT_CHANGE_LIMIT_MS. */
async function untilSlotIs(balancer: Balancer, slot: number, status: string): Promise<void> {
  const deadline = Date.now() + SLOT_CHANGE_LIMIT_MS;
  while ((await balancer.servers())[slot].status !== status) {
    if (Date.now() > deadline) {
      throw new Error(
        `HAProxy did not mark server slot ${slot} ${status} within ${SLOT_CHANGE_LIMIT_MS} ms`,
      );
    }
    await sleep(50);
  }
}

/**
 * Replicas of the built service, started together with one environment, behind HAProxy.
 * Each replica has a server slot in the balancer: a loopback port chosen for it. Spare
 * slots, on ports of their own, take the replicas a surging rollout adds.
 */
export class ReplicaSet {
  private constructor(
    /** The replicas serving; without spare slots, the replica in each server slot now. */
    readonly replicas: Replica[],
    readonly balancer: Balancer,
    /** Each server slot's port, in the balancer's order. */
    private readonly slotPorts: number[],
    private readonly env: Record<string, string>,
    private readonly options: ServiceOptions,
  ) {}

  static async start(
    count: number,
    env: Record<string, string>,
    options: ServiceOptions = {},
    spareSlots = 0,
  ): Promise<ReplicaSet> {
    const ports = await Promise.all(Array.from({ length: count + spareSlots }, () => freePort()));
    const started = await Promise.allSettled(
      ports.slice(0, count).map((port) => startService({ ...env, PORT: String(port) }, options)),
    );
    const replicas = started.flatMap((outcome) =>
      outcome.status === 'fulfilled' ? [outcome.value] : [],
    );
    let balancer: Balancer | undefined;
    try {
      const failed = started.find((outcome) => outcome.status === 'rejected');
      if (failed) throw failed.reason;
      balancer = await startHaproxy(ports.map((port) => `http://127.0.0.1:${port}`));
      // Each replica in rotation; a spare slot out of it once its checks find nothing there.
      for (let slot = 0; slot < ports.length; slot++)
        await untilSlotIs(balancer, slot, slot < count ? 'UP' : 'DOWN');
      return new ReplicaSet(replicas, balancer, ports, env, options);
    } catch (error) {
      await balancer?.stop();
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

  /**
   * Replaces replica `index` as a surging rollout does: a new one (started with `options`,
   * e.g. another build) in a spare server slot, and once HAProxy sends to it, SIGTERM to
   * the old one, whose slot is spare again once it has exited. Resolves with how the old
   * one exited.
   */
  async surge(index: number, options: ServiceOptions = this.options): Promise<Exit> {
    const taken = new Set(this.replicas.map(({ url }) => Number(new URL(url).port)));
    const slot = this.slotPorts.findIndex((port) => !taken.has(port));
    if (slot === -1) throw new Error('no spare server slot to surge into');
    const surged = await startService({ ...this.env, PORT: String(this.slotPorts[slot]) }, options);
    try {
      await untilSlotIs(this.balancer, slot, 'UP');
    } catch (error) {
      await surged.service.stop();
      throw error;
    }
    const { service } = this.replicas[index];
    this.replicas[index] = surged;
    service.signal('SIGTERM');
    return service.exited;
  }

  async stop(): Promise<void> {
    await this.balancer.stop();
    await Promise.all(this.replicas.map(({ service }) => service.stop()));
  }
}
