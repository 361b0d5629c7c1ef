import {
  tracingRequested,
  warnOfUnservedTracesExporters,
} from './common/tracing/tracing-switch.js';
import { refuseStart } from './config/refuse-start.js';

/**
 * The service's entry point. Tracing, when the OTEL_* variables ask for it, starts first:
 * OpenTelemetry patches `pg` and `ioredis` as they load, so the application is imported
 * only after it. When they do not, no OpenTelemetry package is loaded at all.
 */
async function main(): Promise<void> {
  let tracing;
  warnOfUnservedTracesExporters(process.env);
  if (tracingRequested(process.env)) {
    const { startOpenTelemetry, TracingConfigError } =
      await import('./common/tracing/open-telemetry.js');
    try {
      tracing = startOpenTelemetry();
    } catch (error) {
      if (!(error instanceof TracingConfigError)) throw error;
      refuseStart(error.message);
    }
  }
  const { startServer } = await import('./server.js');
  await startServer(tracing);
}

await main();
