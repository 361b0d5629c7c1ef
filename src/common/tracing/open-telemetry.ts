import { register as registerModuleHooks } from 'import-in-the-middle/register-hooks.mjs';
import { Logger, type NestApplicationOptions } from '@nestjs/common';
import {
  type Context,
  context,
  createNoopMeter,
  defaultTextMapGetter,
  defaultTextMapSetter,
  diag,
  DiagLogLevel,
  type Link,
  type MeterProvider,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  type TextMapPropagator,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Tracer,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  CompositePropagator,
  getNumberFromEnv,
  getStringFromEnv,
  getStringListFromEnv,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
} from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { B3InjectEncoding, B3Propagator } from '@opentelemetry/propagator-b3';
import {
  defaultResource,
  detectResources,
  envDetector,
  hostDetector,
  osDetector,
  processDetector,
  resourceFromAttributes,
  serviceInstanceIdDetector,
} from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  SamplingDecision,
  type SamplingResult,
  type SpanExporter,
  type SpanLimits,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { endWith } from './span-outcome.js';
import { REQUEST_SPAN, traceInstanceMethods } from './traced-instances.js';
import type {
  ActiveSpan,
  CapturedTrace,
  RequestDetails,
  SpanAttributes,
  SpanOptions,
  TraceIds,
  Tracing,
} from './tracing.js';
import { useTracing } from './tracing.js';

/** `service.name` unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES names it. */
const DEFAULT_SERVICE_NAME = 'plant-store';
/** What the shutdown waits for queued spans at most: well within its drain (src/shutdown). */
const FLUSH_LIMIT_MS = 3_000;
/** Modules loaded as ES modules that an instrumentation patches. */
const INSTRUMENTED_MODULES = ['pg', 'ioredis'];
/**
 * Links a span keeps at most: a group-commit batch links to every request it carried, up
 * to 256 (the plants' MAX_BATCH); the SDK's default keeps 128.
 */
const DEFAULT_LINK_COUNT_LIMIT = 256;

/** The OTLP protocols served: the two over HTTP, the collectors' common ground. */
const EXPORTERS: Record<string, () => SpanExporter> = {
  'http/protobuf': () => new OtlpProtobufExporter(),
  'http/json': () => new OtlpJsonExporter(),
};

/** OTEL_PROPAGATORS's values served: W3C's two and Zipkin's B3 (single and multi-header). */
const PROPAGATORS: Record<string, () => TextMapPropagator> = {
  tracecontext: () => new W3CTraceContextPropagator(),
  baggage: () => new W3CBaggagePropagator(),
  b3: () => new B3Propagator(),
  b3multi: () => new B3Propagator({ injectEncoding: B3InjectEncoding.MULTI_HEADER }),
};

export class TracingConfigError extends Error {}

/** Started tracing: what src/main.ts hands to NestFactory.create. */
export interface StartedTracing {
  instrument: NonNullable<NestApplicationOptions['instrument']>;
}

/**
 * Starts the OpenTelemetry SDK from the standard variables (endpoint, headers, protocol,
 * service name, resource attributes, sampler, propagators, batch processor) and makes it
 * the service's tracing (see tracing.ts). Must run before the application's modules are
 * loaded, so that `pg` and `ioredis`, imported as ES modules, are patched as they load.
 */
export function startOpenTelemetry(): StartedTracing {
  const protocol = (
    getStringFromEnv('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ??
    getStringFromEnv('OTEL_EXPORTER_OTLP_PROTOCOL') ??
    'http/protobuf'
  ).trim();
  const exporter = EXPORTERS[protocol];
  if (!exporter) {
    throw new TracingConfigError(
      `OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json, not ${protocol}`,
    );
  }
  // Warnings from here on wait, as Nest's own start-up lines do (HTTP_APP_OPTIONS'
  // bufferLogs), for the service's JSON logger: stdout carries nothing else.
  Logger.attachBuffer();
  diag.setLogger(new DiagToNestLogger(), {
    logLevel: DiagLogLevel.WARN,
    suppressOverrideMessage: true,
  });
  registerModuleHooks({ include: INSTRUMENTED_MODULES });
  registerInstrumentations({
    instrumentations: [
      new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
    ],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(propagatorFromEnvironment());
  const droppedSpans = new DroppedSpans();
  // Composed from the trace SDK, not NodeSDK: that one also brings the log and metric SDKs
  // and every exporter (gRPC's included), for traces alone (bench/README.md).
  const provider = new TracerProvider({
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector) win over the default.
    resource: defaultResource()
      .merge(resourceFromAttributes({ 'service.name': DEFAULT_SERVICE_NAME }))
      .merge(
        detectResources({
          detectors: [
            serviceInstanceIdDetector,
            processDetector,
            hostDetector,
            osDetector,
            envDetector,
          ],
        }),
      ),
    sampler: new SampledLinksSampler(samplerFromEnvironment()),
    spanLimits: spanLimitsFromEnvironment(),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: exporter(),
        selfObsMeterProvider: droppedSpans.meterProvider,
        maxQueueSize: getNumberFromEnv('OTEL_BSP_MAX_QUEUE_SIZE'),
        maxExportBatchSize: getNumberFromEnv('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
        scheduledDelayMillis: getNumberFromEnv('OTEL_BSP_SCHEDULE_DELAY'),
        exportTimeoutMillis: getNumberFromEnv('OTEL_BSP_EXPORT_TIMEOUT'),
      }),
    ],
  });
  trace.setGlobalTracerProvider(provider);
  const tracer = trace.getTracer(DEFAULT_SERVICE_NAME);
  useTracing(new OpenTelemetryTracing(tracer, provider, droppedSpans));
  return { instrument: { instanceDecorator: traceInstanceMethods(tracer) } };
}

/**
 * OTEL_PROPAGATORS as the SDK reads it: W3C trace context and baggage unless set; a name
 * not served is warned about and left out.
 */
function propagatorFromEnvironment(): TextMapPropagator {
  const names = new Set(getStringListFromEnv('OTEL_PROPAGATORS') ?? ['tracecontext', 'baggage']);
  const propagators = names.has('none')
    ? []
    : [...names].flatMap((name) => {
        const served = PROPAGATORS[name];
        if (!served) diag.warn(`OTEL_PROPAGATORS: ${name} is not served; left out`);
        return served ? [served()] : [];
      });
  return new CompositePropagator({ propagators });
}

/** The OTEL_SPAN_* and OTEL_ATTRIBUTE_* limits; links 256 unless set (DEFAULT_LINK_COUNT_LIMIT). */
function spanLimitsFromEnvironment(): SpanLimits {
  return {
    attributeCountLimit:
      getNumberFromEnv('OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT') ??
      getNumberFromEnv('OTEL_ATTRIBUTE_COUNT_LIMIT'),
    attributeValueLengthLimit:
      getNumberFromEnv('OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT') ??
      getNumberFromEnv('OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT'),
    eventCountLimit: getNumberFromEnv('OTEL_SPAN_EVENT_COUNT_LIMIT'),
    linkCountLimit: getNumberFromEnv('OTEL_SPAN_LINK_COUNT_LIMIT') ?? DEFAULT_LINK_COUNT_LIMIT,
    attributePerEventCountLimit: getNumberFromEnv('OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT'),
    attributePerLinkCountLimit: getNumberFromEnv('OTEL_LINK_ATTRIBUTE_COUNT_LIMIT'),
  };
}

/**
 * OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG as the specification reads them (the
 * SDK's own reading is not exported): parentbased_always_on unless set.
 */
function samplerFromEnvironment(): Sampler {
  const ratio = getNumberFromEnv('OTEL_TRACES_SAMPLER_ARG') ?? 1;
  const roots: Record<string, () => Sampler> = {
    always_on: () => new AlwaysOnSampler(),
    always_off: () => new AlwaysOffSampler(),
    traceidratio: () => new TraceIdRatioBasedSampler(ratio),
  };
  const name = getStringFromEnv('OTEL_TRACES_SAMPLER')?.trim() || 'parentbased_always_on';
  const root = roots[name.replace(/^parentbased_/, '')];
  if (!root) {
    throw new TracingConfigError(
      `OTEL_TRACES_SAMPLER must be one of ${Object.keys(roots)
        .flatMap((each) => [each, `parentbased_${each}`])
        .join(', ')}, not ${name}`,
    );
  }
  return name.startsWith('parentbased_') ? new ParentBasedSampler({ root: root() }) : root();
}

/**
 * Samples a span that links to a sampled one: a group-commit batch, in no request's trace,
 * is recorded whenever one of the requests it carried is, whatever the ratio. Any other
 * span is sampled as configured.
 */
class SampledLinksSampler implements Sampler {
  constructor(private readonly configured: Sampler) {}

  shouldSample(...args: Parameters<Sampler['shouldSample']>): SamplingResult {
    const links = args[5];
    if (links.some(({ context }) => (context.traceFlags & TraceFlags.SAMPLED) !== 0)) {
      return { decision: SamplingDecision.RECORD_AND_SAMPLED };
    }
    return this.configured.shouldSample(...args);
  }

  toString(): string {
    return `SampledLinks{${this.configured.toString()}}`;
  }
}

/**
 * Logs about tracing itself, written wherever the SDK happens to be (often inside a
 * request that ended a span): they belong to no request's trace.
 */
function outsideAnyTrace(log: () => void): void {
  context.with(ROOT_CONTEXT, log);
}

/** The SDK's own warnings and errors (an unreachable collector, say) as service log lines. */
class DiagToNestLogger {
  private readonly logger = new Logger('OpenTelemetry');
  error = (message: string) => outsideAnyTrace(() => this.logger.error(message));
  warn = (message: string) => outsideAnyTrace(() => this.logger.warn(message));
  info = () => {};
  debug = () => {};
  verbose = () => {};
}

/**
 * Counts the spans the batch processor drops because its queue is full (a collector
 * slower than the service, or down), and warns once. The processor reports them
 * through its self-observability meter: this is that meter, and only that counter.
 */
class DroppedSpans {
  count = 0;
  private readonly logger = new Logger('Tracing');

  readonly meterProvider: MeterProvider = {
    getMeter: () =>
      Object.assign(createNoopMeter(), {
        createCounter: () => ({
          add: (spans: number, attributes?: Record<string, unknown>) => {
            if (attributes?.['error.type'] === 'queue_full') this.dropped(spans);
          },
        }),
      }),
  };

  private dropped(spans: number): void {
    if (this.count === 0) {
      outsideAnyTrace(() =>
        this.logger.warn(
          'the span queue is full (the collector is slow or down): spans are being dropped; see otel_spans_dropped_total',
        ),
      );
    }
    this.count += spans;
  }
}

const W3C_TRACE_CONTEXT = new W3CTraceContextPropagator();

/** A recorded server span's HTTP semantic-convention attributes, and its end with the response. */
function recordRequest(
  span: Span,
  request: IncomingMessage,
  response: ServerResponse,
  route: string | undefined,
  clientAddress: string,
): void {
  const userAgent = request.headers['user-agent'];
  span.setAttributes({
    'http.request.method': request.method ?? 'GET',
    ...(route && { 'http.route': route }),
    'url.path': (request.url ?? '/').split('?', 1)[0],
    'url.scheme': 'http',
    'client.address': clientAddress,
    'network.protocol.version': request.httpVersion,
    ...(userAgent && { 'user_agent.original': userAgent }),
  });
  response.once('close', () => {
    const status = response.statusCode;
    span.setAttribute('http.response.status_code', status);
    if (!response.writableEnded) span.setAttribute('error.type', 'aborted');
    else if (status >= 500) {
      span.setAttribute('error.type', String(status));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  });
}

/** Where a request keeps its context, for resumeRequest: a property, cheaper than a map. */
const REQUEST_CONTEXT = Symbol('plant-store request context');
type InRequest = IncomingMessage & { [REQUEST_CONTEXT]?: Context };

class OpenTelemetryTracing implements Tracing {
  readonly enabled = true;

  constructor(
    private readonly tracer: Tracer,
    private readonly provider: TracerProvider,
    private readonly dropped: DroppedSpans,
  ) {}

  droppedSpans(): number {
    return this.dropped.count;
  }

  activeIds(): TraceIds | undefined {
    const span = trace.getActiveSpan();
    if (!span) return undefined;
    const { traceId, spanId, traceFlags } = span.spanContext();
    return { traceId, spanId, sampled: (traceFlags & TraceFlags.SAMPLED) !== 0 };
  }

  annotate(attributes: SpanAttributes): void {
    trace.getActiveSpan()?.setAttributes(attributes);
  }

  traceRequest(
    request: IncomingMessage,
    response: ServerResponse,
    { route, clientAddress }: RequestDetails,
    next: () => void,
  ): void {
    const parent = propagation.extract(ROOT_CONTEXT, request.headers, defaultTextMapGetter);
    const method = request.method ?? 'GET';
    // The samplers the variables choose read no attributes: they are built only for a
    // span that is recorded, as most are not at a production ratio.
    const span = this.tracer.startSpan(
      route ? `${method} ${route}` : method,
      { kind: SpanKind.SERVER },
      parent,
    );
    if (span.isRecording()) recordRequest(span, request, response, route, clientAddress);
    const inRequest = trace.setSpan(parent, span).setValue(REQUEST_SPAN, span);
    (request as InRequest)[REQUEST_CONTEXT] = inRequest;
    context.with(inRequest, next);
  }

  resumeRequest(request: IncomingMessage, next: () => void): void {
    const inRequest = (request as InRequest)[REQUEST_CONTEXT];
    if (inRequest) context.with(inRequest, next);
    else next();
  }

  bindToActive<Callback extends (...args: never[]) => unknown>(callback: Callback): Callback {
    return context.bind(context.active(), callback);
  }

  capture(): CapturedTrace | undefined {
    return context.active() as unknown as CapturedTrace;
  }

  async batch<T>(
    name: string,
    requests: (CapturedTrace | undefined)[],
    work: () => Promise<T>,
  ): Promise<T> {
    const spans = requests
      .map((captured) => captured && trace.getSpan(captured as unknown as typeof ROOT_CONTEXT))
      .filter((span): span is Span => span?.isRecording() === true);
    // Nobody sampled waits for it: no span, and none for its statement either.
    if (spans.length === 0) return context.with(ROOT_CONTEXT, work);
    const links: Link[] = spans.map((span) => ({ context: span.spanContext() }));
    return this.tracer.startActiveSpan(
      name,
      { root: true, links, attributes: { 'db.operation.batch.size': requests.length } },
      async (batchSpan) => {
        const toBatch: Link = { context: batchSpan.spanContext() };
        for (const span of spans) span.addLink(toBatch);
        return endWith(batchSpan, work);
      },
    );
  }

  traceparent(): string | null {
    const sampled = (trace.getActiveSpan()?.spanContext().traceFlags ?? 0) & TraceFlags.SAMPLED;
    if (!sampled) return null;
    const carrier: Record<string, string> = {};
    W3C_TRACE_CONTEXT.inject(context.active(), carrier, defaultTextMapSetter);
    return carrier.traceparent ?? null;
  }

  inSpan<T>(
    name: string,
    { kind, attributes, parent }: SpanOptions,
    work: (span: ActiveSpan) => Promise<T>,
  ): Promise<T> {
    const parentContext =
      parent === undefined
        ? context.active()
        : parent === null
          ? ROOT_CONTEXT
          : W3C_TRACE_CONTEXT.extract(ROOT_CONTEXT, { traceparent: parent }, defaultTextMapGetter);
    return this.tracer.startActiveSpan(
      name,
      { kind: kind === 'client' ? SpanKind.CLIENT : SpanKind.INTERNAL, attributes },
      parentContext,
      (span) =>
        endWith(span, () =>
          work({
            setAttributes: (more) => span.setAttributes(more),
            fail: (reason) => span.setStatus({ code: SpanStatusCode.ERROR, message: reason }),
            propagationHeaders: () => {
              const headers: Record<string, string> = {};
              propagation.inject(context.active(), headers, defaultTextMapSetter);
              return headers;
            },
          }),
        ),
    );
  }

  async shutdown(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, FLUSH_LIMIT_MS);
    });
    await Promise.race([this.provider.shutdown().catch(() => {}), limit]);
    clearTimeout(timer);
  }
}
