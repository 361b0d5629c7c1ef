import { Controller, Get, Headers, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Public } from '../auth/decorators/public.decorator.js';
import {
  ApiErrorResponse,
  RETRY_AFTER_HEADER,
} from '../common/openapi/api-error-response.decorator.js';
import { negotiatedContentType } from './metrics-format.js';
import { MetricsService } from './metrics.service.js';

/** Excerpts of each format, a counter and a histogram bucket, for the document. */
const PROMETHEUS_EXAMPLE = [
  '# TYPE http_requests_total counter',
  'http_requests_total{method="GET",route="/plants/:id",status="200"} 42',
  '# TYPE http_request_duration_seconds histogram',
  'http_request_duration_seconds_bucket{le="0.005",method="GET",route="/plants/:id",status="200"} 40',
  '',
].join('\n');
const OPENMETRICS_EXAMPLE = [
  '# TYPE http_requests counter',
  'http_requests_total{method="GET",route="/plants/:id",status="200"} 42',
  '# TYPE http_request_duration_seconds histogram',
  'http_request_duration_seconds_bucket{le="0.005",method="GET",route="/plants/:id",status="200"} 40 # {trace_id="4bf92f3577b34da6a3ce929d0e0e4736",span_id="00f067aa0ba902b7"} 0.0031 1764115200.123',
  '# EOF',
  '',
].join('\n');

@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  /**
   * The Prometheus text format, or OpenMetrics when the Accept header prefers it; no token
   * (keep the port off the internet or filter it).
   */
  @Get()
  @Public()
  @ApiOperation({
    operationId: 'scrapeMetrics',
    summary: 'Prometheus metrics',
    description:
      'The Prometheus text format (0.0.4), or the OpenMetrics text format (1.0.0) when the Accept header rates `application/openmetrics-text` above `text/plain`, as Prometheus does. With tracing on, OpenMetrics adds exemplars to the `http_request_duration_seconds` buckets: the `trace_id` and `span_id` of the latest sampled request in each.',
  })
  @ApiOkResponse({
    description: 'The metrics, in the format the Accept header prefers',
    content: {
      'text/plain': { schema: { type: 'string', examples: [PROMETHEUS_EXAMPLE] } },
      'application/openmetrics-text': {
        schema: { type: 'string', examples: [OPENMETRICS_EXAMPLE] },
      },
    },
  })
  @ApiErrorResponse(429, 'This client address sent too many requests', RETRY_AFTER_HEADER)
  scrape(
    @Headers('accept') accept: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    const contentType = negotiatedContentType(accept);
    reply.header('Content-Type', contentType);
    // Added to, not replaced: CORS may have put Origin there.
    const vary = reply.getHeader('Vary');
    reply.header('Vary', vary ? `${String(vary)}, Accept` : 'Accept');
    return this.metrics.render(contentType);
  }
}
