import { readFileSync } from 'node:fs';

/**
 * The standard OpenTelemetry variables a deployment may set beside the service's own
 * (CONFIG_VARIABLES): read by src/common/tracing and the OpenTelemetry SDK, never by
 * AppConfig, and documented in docs/operations/observability.md's Tracing section.
 */
export const OTEL_VARIABLES = [
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_PROTOCOL',
  'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
  'OTEL_EXPORTER_OTLP_TIMEOUT',
  'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT',
  'OTEL_SERVICE_NAME',
  'OTEL_RESOURCE_ATTRIBUTES',
  'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_SAMPLER_ARG',
  'OTEL_PROPAGATORS',
  'OTEL_BSP_MAX_QUEUE_SIZE',
  'OTEL_BSP_SCHEDULE_DELAY',
  'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
  'OTEL_BSP_EXPORT_TIMEOUT',
  'OTEL_SPAN_LINK_COUNT_LIMIT',
  'OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT',
  'OTEL_ATTRIBUTE_COUNT_LIMIT',
  'OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT',
  'OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT',
  'OTEL_SPAN_EVENT_COUNT_LIMIT',
  'OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT',
  'OTEL_LINK_ATTRIBUTE_COUNT_LIMIT',
  'OTEL_SDK_DISABLED',
  'OTEL_TRACES_EXPORTER',
];

/** The variables the first column of docs/operations/observability.md's tracing table names. */
export function documentedOtelVariables(): string[] {
  const operations = readFileSync('docs/operations/observability.md', 'utf8');
  const section = /^## Tracing\n([\s\S]*?)^## /m.exec(operations)![1];
  const table = /^### The variables\n([\s\S]*?)^### /m.exec(section)![1];
  return table
    .split('\n')
    .filter((line) => line.startsWith('| `OTEL_'))
    .flatMap((line) => [...line.split('|')[1].matchAll(/`(OTEL_\w+)`/g)].map(([, name]) => name));
}
