/**
 * Whether the standard OpenTelemetry variables ask for traces: an OTLP endpoint (for
 * every signal or for traces), or `OTEL_TRACES_EXPORTER=otlp`. `OTEL_SDK_DISABLED=true`
 * turns it off whatever else is set. Read before anything else is loaded: when it says
 * no, no OpenTelemetry package is (src/main.ts).
 */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((name) => name.trim());
  if (exporters.includes('none')) return false;
  return (
    Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()) ||
    Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim()) ||
    exporters.includes('otlp')
  );
}
