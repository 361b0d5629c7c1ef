import { Controller, Get } from '@nestjs/common';
import { HealthCheck, type HealthCheckResult } from '@nestjs/terminus';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import { Public } from '../auth/decorators/public.decorator.js';
import { ApiDatabaseUnavailableResponse } from '../common/openapi/api-error-response.decorator.js';
import { type BuildInfo, buildInfo } from '../config/build-info.js';
import { ShutdownService } from '../shutdown/shutdown.service.js';
import { ShuttingDownError } from '../shutdown/shutting-down.error.js';
import { ReadinessService } from './readiness.service.js';

/** Which release answers: during a rollout, replicas of two releases answer side by side. */
const BUILD_INFO_PROPERTIES = {
  version: { type: 'string', description: 'The semantic version it runs', example: '1.0.0' },
  revision: {
    type: 'string',
    description: 'The git commit it was built from, or `unknown`',
    example: '9f4213a0c5d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5',
  },
};
const LIVENESS_SCHEMA = {
  type: 'object',
  required: ['status', 'version', 'revision'],
  properties: { status: { type: 'string', enum: ['ok'] }, ...BUILD_INFO_PROPERTIES },
};
/** terminus' report (the status and, per check, its details), and the release. */
const READINESS_SCHEMA = {
  ...LIVENESS_SCHEMA,
  properties: {
    status: { type: 'string', enum: ['ok', 'shutting_down'] },
    ...BUILD_INFO_PROPERTIES,
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
  @ApiOkResponse({ description: 'Alive', schema: LIVENESS_SCHEMA })
  live(): { status: 'ok' } & BuildInfo {
    return { status: 'ok', ...buildInfo() };
  }

  /**
   * The database answered `SELECT 1` in time, within the last second; 503 otherwise, and
   * from the start of a shutdown on. A database that answers but takes no writes leaves
   * it ready, with `writes: 'refused'` in the database's details (ReadinessService).
   */
  @Get('ready')
  @HealthCheck({ noCache: true, swaggerDocumentation: false })
  @ApiOperation({ operationId: 'checkReadiness', summary: 'The database answers in time' })
  @ApiOkResponse({ description: 'Ready to serve requests', schema: READINESS_SCHEMA })
  @ApiDatabaseUnavailableResponse()
  async ready(): Promise<HealthCheckResult & BuildInfo> {
    if (this.shutdown.isDraining) throw new ShuttingDownError();
    const { status, ...checks } = await this.readiness.report();
    return { status, ...buildInfo(), ...checks };
  }
}
