import { Injectable, ServiceUnavailableException } from '@nestjs/common';
import {
  type HealthCheckResult,
  HealthCheckService,
  TypeOrmHealthIndicator,
} from '@nestjs/terminus';
import { DatabaseUnavailableError } from '../database/database-errors.js';
import { DatabaseWrites } from '../database/database-writes.js';

/** A readiness probe must answer well within a probe's own time-out. */
const READY_TIMEOUT_MS = 1_000;
/**
 * Probes share one check and its outcome for this long, so that polling them costs the
 * pool one `SELECT 1` a second at most, and each probe little more than /health/live; an
 * outage shows within this plus the time-out.
 */
const READY_RESULT_TTL_MS = 1_000;

/**
 * Whether the database answers: terminus' ping, shared by every probe within a second; and
 * whether it takes writes, which leaves the replica ready (see withDatabaseWrites).
 */
@Injectable()
export class ReadinessService {
  private latest: { at: number; outcome: Promise<HealthCheckResult> } | undefined;

  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly writes: DatabaseWrites,
  ) {}

  /** The shared check's report, its database saying whether it takes writes now. */
  async report(): Promise<HealthCheckResult> {
    return withDatabaseWrites(await this.check(), this.writes.acceptsWrites);
  }

  /** terminus' report; rejects with DatabaseUnavailableError when the ping failed. */
  check(): Promise<HealthCheckResult> {
    const now = Date.now();
    if (this.latest === undefined || now - this.latest.at >= READY_RESULT_TTL_MS) {
      this.latest = { at: now, outcome: this.ping() };
    }
    return this.latest.outcome;
  }

  private async ping(): Promise<HealthCheckResult> {
    try {
      return await this.health.check([
        () => this.database.pingCheck('database').withTimeout(READY_TIMEOUT_MS),
      ]);
    } catch (error) {
      const result =
        error instanceof ServiceUnavailableException
          ? (error.getResponse() as HealthCheckResult)
          : undefined;
      // Only a failed check means the database is down ('shutting_down' passes as it is).
      if (result?.status !== 'error') throw error;
      throw new DatabaseUnavailableError(String(result.details.database?.message ?? 'no answer'));
    }
  }
}

/**
 * The report with, beside the database's status, whether it takes writes ('accepted' or
 * 'refused'; see DatabaseWrites). A database that takes no writes leaves the replica
 * ready: it serves reads, and answers writes 503 with Retry-After; taking every replica
 * out of rotation would refuse the reads too (docs/operations/database.md, When the database moves).
 */
function withDatabaseWrites(report: HealthCheckResult, acceptsWrites: boolean): HealthCheckResult {
  const writes = acceptsWrites ? 'accepted' : 'refused';
  const { info, details } = report;
  return {
    ...report,
    ...(info?.database && { info: { ...info, database: { ...info.database, writes } } }),
    details: { ...details, database: { ...details.database, writes } },
  };
}
