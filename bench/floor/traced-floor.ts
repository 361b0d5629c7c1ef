// The design card's floor (floor.ts), traced the way OpenTelemetry's documentation sets
// up a Node.js service: the trace SDK with its batch processor and OTLP/HTTP (protobuf)
// exporter, W3C trace context, and the maintained instrumentations of the HTTP server and
// of `pg`, registered before the floor's modules load. It samples parent-based, by trace
// id, at the ratio OTEL_TRACES_SAMPLER_ARG (every request unless set). Its trace is the
// least a create or a read can have: the server span (named by method: nothing gives it
// the route) and one span per statement; no connection spans, no steps.
// `BENCH_FLOOR=1 BENCH_TRACING=floor100` (or floor10) runs it (bench/README.md).
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';

registerInstrumentations({
  instrumentations: [
    new HttpInstrumentation(),
    new PgInstrumentation({ ignoreConnectSpans: true }),
  ],
});
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(new W3CTraceContextPropagator());
trace.setGlobalTracerProvider(
  new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'plant-store-floor' }),
    sampler: new ParentBasedSampler({
      root: new TraceIdRatioBasedSampler(Number(process.env.OTEL_TRACES_SAMPLER_ARG ?? 1)),
    }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter() })],
  }),
);

await import('./floor.js');
