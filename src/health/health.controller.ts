import { Controller, Get } from '@nestjs/common';
import { HealthCheck, type HealthCheckResult } from '@nestjs/terminus';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import { Public } from '../auth/decorators/public.decorator.js';
import { ApiDatabaseUnavailableResponse } from '../common/openapi/api-error-response.decorator.js';
import { ShutdownService } from '../shutdown/shutdown.service.js';
import { ShuttingDownError } from '../shutdown/shutting-down.error.js';
import { ReadinessService } from './readiness.service.js';

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
    private readonly readiness: ReadinessService,
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
  ready(): Promise<HealthCheckResult> {
    if (this.shutdown.isDraining) throw new ShuttingDownError();
    return this.readiness.check();
  }
}
