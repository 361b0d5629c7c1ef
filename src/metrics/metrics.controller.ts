import { Controller, Get, Header } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { Registry } from 'prom-client';
import { Public } from '../auth/decorators/public.decorator.js';
import {
  ApiErrorResponse,
  RETRY_AFTER_HEADER,
} from '../common/openapi/api-error-response.decorator.js';
import { MetricsService } from './metrics.service.js';

@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  /** Prometheus text format; no token (keep the port off the internet or filter it). */
  @Get()
  @Public()
  @Header('Content-Type', Registry.PROMETHEUS_CONTENT_TYPE)
  @ApiOperation({ operationId: 'scrapeMetrics', summary: 'Prometheus metrics' })
  @ApiOkResponse({
    description: 'The Prometheus text format',
    content: { 'text/plain': { schema: { type: 'string' } } },
  })
  @ApiErrorResponse(429, 'This client address sent too many requests', RETRY_AFTER_HEADER)
  scrape(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
