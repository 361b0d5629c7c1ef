import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import {
  HealthCheck,
  type HealthCheckResult,
  HealthCheckService,
  TypeOrmHealthIndicator,
} from '@nestjs/terminus';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import { Public } from '../auth/decorators/public.decorator.js';
import { ApiDatabaseUnavailableResponse } from '../common/openapi/api-error-response.decorator.js';
import { DatabaseUnavailableError } from '../database/database-errors.js';
import { ShutdownService } from '../shutdown/shutdown.service.js';
import { ShuttingDownError } from '../shutdown/shutting-down.error.js';

/** A readiness probe must answer well within a probe's own time-out. */
const READY_TIMEOUT_MS = 1_000;
/**
 * Probes share one check and its result for this long, so that polling them costs the
 * pool one `SELECT 1` a second at most; an outage shows within this plus the time-out.
 */
const READY_RESULT_TTL_MS = 1_000;

const STATUS_OK_SCHEMA = {
  type: 'object',
  required: ['status'],
  properties: { status: { type: 'string', enum: ['ok'] } },
};
/** terminus' report: the status and, per check, its details. */
const READINESS_SCHEMA = {
  ...STATUS_OK_SCHEMA,
  properties: {
    status: { type: 'string', enum: ['ok', 'shutting_down'] },
    info: { type: 'object' },
    error: { type: 'object' },
    details: { type: 'object' },
  },
};

/** Probes for orchestrators and load balancers: no token, never rate limited. */
@Controller('health')
@Public()
@SkipThrottle()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly shutdown: ShutdownService,
  ) {}

  /** The process answers; nothing else is checked, so a database outage restarts nothing. */
  @Get('live')
  @ApiOperation({ operationId: 'checkLiveness', summary: 'The process answers' })
  @ApiOkResponse({ description: 'Alive', schema: STATUS_OK_SCHEMA })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * The database answered `SELECT 1` in time, within the last second; 503 otherwise, and
   * from the start of a shutdown on.
   */
  @Get('ready')
  @HealthCheck({ noCache: true, swaggerDocumentation: false })
  @ApiOperation({ operationId: 'checkReadiness', summary: 'The database answers in time' })
  @ApiOkResponse({ description: 'Ready to serve requests', schema: READINESS_SCHEMA })
  @ApiDatabaseUnavailableResponse()
  async ready(): Promise<HealthCheckResult> {
    if (this.shutdown.isDraining) throw new ShuttingDownError();
    try {
      return await this.health.check([
        () =>
          this.database
            .pingCheck('database')
            .withTimeout(READY_TIMEOUT_MS)
            .cacheFor(READY_RESULT_TTL_MS),
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
