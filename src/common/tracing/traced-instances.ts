import {
  type Context,
  context,
  createContextKey,
  type Span,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { endWhenSettled, recordFailure } from './span-outcome.js';

/** The steps of a request a trace shows, by Nest's naming of the classes that take them. */
const TRACED_CLASS = /(Guard|Pipe|Service)$/;
/** Run once, at start or stop: never inside a request. */
const UNTRACED_METHODS = new Set([
  'constructor',
  'onModuleInit',
  'onApplicationBootstrap',
  'onModuleDestroy',
  'beforeApplicationShutdown',
  'onApplicationShutdown',
]);

/** Set in a request's context to its server span (see OpenTelemetryTracing.traceRequest). */
export const REQUEST_SPAN = createContextKey('plant-store request span');

/** Whether the active span is a request's server span, and it is recorded. */
function inRecordedRequest(active: Context): boolean {
  const span = active.getValue(REQUEST_SPAN) as Span | undefined;
  return span !== undefined && trace.getSpan(active) === span && span.isRecording();
}

/** Every method an instance answers to, its class's and its parents' (a guard's canActivate). */
function methodNames(instance: object): Set<string> {
  const names = new Set<string>();
  for (
    let prototype = Object.getPrototypeOf(instance);
    prototype && prototype !== Object.prototype;
    prototype = Object.getPrototypeOf(prototype)
  ) {
    for (const [name, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(prototype))) {
      if (typeof descriptor.value === 'function' && !UNTRACED_METHODS.has(name)) names.add(name);
    }
  }
  return names;
}

/**
 * Nest's `instrument.instanceDecorator` (NestFactory.create): a guard, pipe or service
 * Nest created, called by the request itself (Nest's pipeline, a controller), runs in a
 * span named `Class.method`: `BearerAuthGuard.canActivate`, `RequestValidationPipe.transform`,
 * `PlantsService.create`. What it calls in turn (the token lookup, the Redis command, the
 * statements) is in its span: attributes, and the pg and ioredis spans. Calls outside a
 * recorded request (an unsampled one, a worker, a timer, the start-up) cost one check.
 */
export function traceInstanceMethods(tracer: Tracer): (instance: unknown) => unknown {
  const decorated = new WeakSet<object>();
  return (instance) => {
    if (typeof instance !== 'object' || instance === null || decorated.has(instance)) {
      return instance;
    }
    decorated.add(instance);
    const className = instance.constructor?.name;
    if (typeof className !== 'string' || !TRACED_CLASS.test(className)) return instance;
    const methods = instance as Record<string, (...args: unknown[]) => unknown>;
    for (const name of methodNames(instance)) {
      const method = methods[name];
      const spanName = `${className}.${name}`;
      methods[name] = function traced(this: unknown, ...args: unknown[]) {
        const active = context.active();
        if (!inRecordedRequest(active)) return method.apply(this, args);
        const span = tracer.startSpan(spanName, undefined, active);
        return context.with(trace.setSpan(active, span), () => {
          let result: unknown;
          try {
            result = method.apply(this, args);
          } catch (error) {
            recordFailure(span, error);
            span.end();
            throw error;
          }
          if (result instanceof Promise) return endWhenSettled(span, result);
          span.end();
          return result;
        });
      };
    }
    return instance;
  };
}
