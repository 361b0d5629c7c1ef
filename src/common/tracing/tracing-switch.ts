import { Logger } from '@nestjs/common';

/** The values of OTEL_TRACES_EXPORTER this service serves. */
const SERVED_EXPORTERS = new Set(['otlp', 'none']);

/**
 * Whether the standard OpenTelemetry variables ask for traces: an OTLP endpoint (for
 * every signal or for traces), or `OTEL_TRACES_EXPORTER=otlp`. `OTEL_SDK_DISABLED=true`
 * turns it off whatever else is set. Read before anything else is loaded: when it says
 * no, no OpenTelemetry package is (src/main.ts).
 */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  if (sdkDisabled(env)) return false;
  const exporters = tracesExporters(env);
  if (exporters.includes('none')) return false;
  return (
    Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()) ||
    Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim()) ||
    exporters.includes('otlp')
  );
}

/**
 * The exporters OTEL_TRACES_EXPORTER names that are not served (`console`, `zipkin`):
 * left out, and warned about, as the SDK does, rather than silently exporting nothing.
 */
export function unservedTracesExporters(env: NodeJS.ProcessEnv): string[] {
  if (sdkDisabled(env)) return [];
  return tracesExporters(env).filter((name) => !SERVED_EXPORTERS.has(name));
}

/**
 * Warns of each unserved exporter, buffered (as tracing's own warnings are) for the
 * service's JSON logger, which writes it once it exists.
 */
export function warnOfUnservedTracesExporters(env: NodeJS.ProcessEnv): void {
  const unserved = unservedTracesExporters(env);
  if (unserved.length === 0) return;
  Logger.attachBuffer();
  const logger = new Logger('Tracing');
  for (const name of unserved) {
    logger.warn(`OTEL_TRACES_EXPORTER: ${name} is not served (otlp and none are); left out`);
  }
}

function tracesExporters(env: NodeJS.ProcessEnv): string[] {
  return (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
}

/** `OTEL_SDK_DISABLED=true`: no OpenTelemetry variable is read. */
function sdkDisabled(env: NodeJS.ProcessEnv): boolean {
  return env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true';
}
