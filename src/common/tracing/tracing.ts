import type { IncomingMessage, ServerResponse } from 'node:http';

/** A span's ids as W3C trace context writes them (32 and 16 hex digits). */
export interface TraceIds {
  traceId: string;
  spanId: string;
  /** Whether the trace is recorded (exported), as the sampler decided. */
  sampled: boolean;
}

export type SpanAttributes = Record<string, string | number | boolean>;

/** What the HTTP layer knows of a request once it is routed. */
export interface RequestDetails {
  /** The route pattern it matched (`/plants/:id`); undefined when none did. */
  route: string | undefined;
  /** The client's address (a trusted proxy's X-Forwarded-For, or the peer). */
  clientAddress: string;
}

/** The trace context active at some point, kept to be linked to later (opaque). */
export interface CapturedTrace {
  readonly capturedTrace: unique symbol;
}

/** The span `inSpan` runs its work in. */
export interface ActiveSpan {
  setAttributes(attributes: SpanAttributes): void;
  /** Marks the span failed, with why. */
  fail(reason: string): void;
  /** The headers that carry this span's context to the next service (`traceparent`). */
  propagationHeaders(): Record<string, string>;
}

export interface SpanOptions {
  kind?: 'internal' | 'client';
  attributes?: SpanAttributes;
  /** A stored `traceparent` to continue; null or invalid: a new trace. */
  parent?: string | null;
}

/**
 * What the service asks of tracing. Until OpenTelemetry is started (only when the
 * standard OTEL_* variables ask for it: src/main.ts), this is NO_TRACING, whose every
 * call does nothing and which loads no OpenTelemetry package: the features call it
 * unconditionally and pay nothing when tracing is off.
 */
export interface Tracing {
  readonly enabled: boolean;
  /** The ids of the span active now, when it is recorded: for log lines and exemplars. */
  activeIds(): TraceIds | undefined;
  /** Adds attributes to the span active now. */
  annotate(attributes: SpanAttributes): void;
  /**
   * Runs the rest of a request's handling (`next`) in its server span: in the trace of its
   * `traceparent` header when it has a valid one, named by its route (`POST /plants`),
   * ended when its response closes.
   */
  traceRequest(
    request: IncomingMessage,
    response: ServerResponse,
    details: RequestDetails,
    next: () => void,
  ): void;
  /**
   * Runs `next` in the request's span again: once its body is read, whose events come
   * from the socket, outside it.
   */
  resumeRequest(request: IncomingMessage, next: () => void): void;
  /** `callback`, to be run later in the context active now (an event listener's). */
  bindToActive<Callback extends (...args: never[]) => unknown>(callback: Callback): Callback;
  /** The context active now, to link a later span to. */
  capture(): CapturedTrace | undefined;
  /**
   * Runs work that serves many requests at once (a group-committed statement) in a span of
   * its own, in no request's trace: it links to each request's span, each of those links
   * back to it, and it records how many it carried.
   */
  batch<T>(
    name: string,
    requests: (CapturedTrace | undefined)[],
    work: () => Promise<T>,
  ): Promise<T>;
  /** The span active now as a W3C `traceparent`, to be stored and continued; null when none is sampled. */
  traceparent(): string | null;
  /** Runs `work` in a new span, in the active trace or the one `options.parent` names. */
  inSpan<T>(name: string, options: SpanOptions, work: (span: ActiveSpan) => Promise<T>): Promise<T>;
  /** Spans dropped because the export queue was full, since the start. */
  droppedSpans(): number;
  /** Exports what is queued, within a bound; traces nothing afterwards. */
  shutdown(): Promise<void>;
}

const NO_SPAN: ActiveSpan = {
  setAttributes: () => {},
  fail: () => {},
  propagationHeaders: () => ({}),
};

export const NO_TRACING: Tracing = {
  enabled: false,
  activeIds: () => undefined,
  annotate: () => {},
  traceRequest: (_request, _response, _details, next) => next(),
  resumeRequest: (_request, next) => next(),
  bindToActive: (callback) => callback,
  capture: () => undefined,
  batch: (_name, _requests, work) => work(),
  traceparent: () => null,
  inSpan: (_name, _options, work) => work(NO_SPAN),
  droppedSpans: () => 0,
  shutdown: () => Promise.resolve(),
};

let current: Tracing = NO_TRACING;

/** The tracing in use: NO_TRACING unless OpenTelemetry was started. */
export function tracing(): Tracing {
  return current;
}

/** Called once, by the OpenTelemetry start-up, before the application is loaded. */
export function useTracing(started: Tracing): void {
  current = started;
}
