import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import {
  HealthCheck,
  type HealthCheckResult,
  HealthCheckService,
  TypeOrmHealthIndicator,
} from '@nestjs/terminus';
import { SkipThrottle } from '@nestjs/throttler';
import { Public } from '../auth/decorators/public.decorator.js';
import { DatabaseUnavailableError } from '../database/database-unavailable.js';

/** A readiness probe must answer well within a probe's own time-out. */
const READY_TIMEOUT_MS = 1_000;

/** Probes for orchestrators and load balancers: no token, never rate limited. */
@Controller('health')
@Public()
@SkipThrottle()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
  ) {}

  /** The process answers; nothing else is checked, so a database outage restarts nothing. */
  @Get('live')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** The database answers `SELECT 1` in time; 503 otherwise. */
  @Get('ready')
  @HealthCheck()
  async ready(): Promise<HealthCheckResult> {
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
