import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { AppConfig } from '../../config/app-config.js';
import { type SweepLimits, WebhooksRepository } from '../webhooks.repository.js';
import { RetentionMetrics } from './retention-metrics.js';

/**
 * Rows one batch removes at most: a transaction of a few milliseconds, so that a
 * shutdown waits for one at most, and the locks it takes are short.
 */
export const RETENTION_BATCH = 1_000;
/**
 * How long a batch waits for a table's lock: behind a migration's, it gives up and the
 * next sweep tries again, rather than queue the service's statements behind its own wait.
 */
const LOCK_TIMEOUT_MS = 1_000;

/**
 * The retention of webhook deliveries: a delivered or failed delivery whose plant was
 * created more than WEBHOOK_DELIVERY_RETENTION ago is removed (it can no longer be
 * redelivered); a pending one never is, whatever its age. The process that swept also
 * erases the previous signing secrets whose rotation overlap has ended. A sweep runs at start, then
 * every RETENTION_SWEEP_INTERVAL_MS, in batches of RETENTION_BATCH rows, each a short
 * transaction of its own holding an advisory lock: one process sweeps at a time, and a
 * process that finds the lock taken leaves the sweep to the one that holds it. A sweep
 * that fails (the database is away, a time-out) is logged and tried again at the next
 * interval. Stopping waits for the batch under way, never for the rest of the sweep.
 */
@Injectable()
export class DeliveryRetentionService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Retention');
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
  private stopped = false;
  /** Says so once per outage, not once per sweep. */
  private failing = false;

  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly metrics: RetentionMetrics,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.webhookDeliveryRetentionMs === null) return;
    this.timer = setInterval(() => this.startSweep(), this.config.retentionSweepIntervalMs);
    this.startSweep();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.sweeping;
  }

  /** A sweep, unless the last one is still under way (a large backlog, a slow database). */
  private startSweep(): void {
    if (this.sweeping || this.stopped) return;
    this.sweeping = this.sweep().finally(() => (this.sweeping = undefined));
  }

  private async sweep(): Promise<void> {
    const retentionMs = this.config.webhookDeliveryRetentionMs!;
    const limits: SweepLimits = {
      statementTimeoutMs: this.config.databaseStatementTimeoutMs,
      lockTimeoutMs: Math.min(LOCK_TIMEOUT_MS, this.config.databaseStatementTimeoutMs),
    };
    const started = performance.now();
    let from: Date | '-infinity' = '-infinity';
    let removed = 0;
    try {
      for (;;) {
        if (this.stopped) return;
        const batch = await this.webhooks.removeExpiredDeliveries(
          retentionMs,
          from,
          RETENTION_BATCH,
          limits,
        );
        if (batch === undefined) {
          this.logger.debug('another process is sweeping: this one leaves it the sweep');
          return;
        }
        removed += batch.removed;
        this.metrics.removed.inc({ table: 'webhook_deliveries' }, batch.removed);
        if (batch.removed < RETENTION_BATCH) break;
        from = batch.newest!;
      }
      await this.webhooks.eraseEndedPreviousSecrets();
    } catch (error) {
      if (!this.failing) {
        this.logger.warn(
          `the retention sweep failed, and is tried again in ${this.config.retentionSweepIntervalMs} ms: ${(error as Error).message}`,
        );
      }
      this.failing = true;
      return;
    }
    if (this.failing) this.logger.log('the retention sweep succeeds again');
    this.failing = false;
    this.metrics.lastSuccess.set(Date.now() / 1000);
    if (removed > 0) {
      this.logger.log(
        `removed ${removed} webhook deliveries older than WEBHOOK_DELIVERY_RETENTION in ${Math.round(performance.now() - started)} ms`,
      );
    }
  }
}
