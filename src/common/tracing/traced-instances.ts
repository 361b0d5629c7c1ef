import { context, createContextKey, type Tracer, trace } from '@opentelemetry/api';
import { endWith, recordFailure } from './span-outcome.js';

/** The parts of an application a request's trace shows, by Nest's naming of them. */
const TRACED_CLASS = /(Guard|Pipe|Service|Repository|Storage)$/;
/** Run once, at start or stop: never inside a request. */
const UNTRACED_METHODS = new Set([
  'constructor',
  'onModuleInit',
  'onApplicationBootstrap',
  'onModuleDestroy',
  'beforeApplicationShutdown',
  'onApplicationShutdown',
]);
/** The instance whose method the active span is: its calls to itself get no span of their own. */
const TRACED_INSTANCE = createContextKey('plant-store traced instance');

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

/** TypeORM's own repositories: the statements they send have spans of their own (pg). */
const UNTRACED_CLASSES = new Set(['Repository', 'TreeRepository', 'MongoRepository']);

function isTracedProvider(instance: object): boolean {
  const { name } = instance.constructor ?? {};
  return typeof name === 'string' && TRACED_CLASS.test(name) && !UNTRACED_CLASSES.has(name);
}

/**
 * Nest's `instrument.instanceDecorator` (NestFactory.create): a call into a guard, pipe,
 * service, repository or storage Nest created runs in a span of its own, named
 * `Class.method` (`BearerAuthGuard.canActivate`, `PlantsService.create`), when it is made
 * inside a span still being recorded, a request's. What such a call does inside its own
 * instance is part of its span; a call from a worker, a timer or the start-up gets none.
 */
export function traceInstanceMethods(tracer: Tracer): (instance: unknown) => unknown {
  const decorated = new WeakSet<object>();
  return (instance) => {
    if (typeof instance !== 'object' || instance === null || decorated.has(instance)) {
      return instance;
    }
    decorated.add(instance);
    if (!isTracedProvider(instance)) return instance;
    const methods = instance as Record<string, (...args: unknown[]) => unknown>;
    for (const name of methodNames(instance)) {
      const method = methods[name];
      const spanName = `${instance.constructor.name}.${name}`;
      methods[name] = function traced(this: unknown, ...args: unknown[]) {
        const active = context.active();
        if (
          active.getValue(TRACED_INSTANCE) === instance ||
          trace.getSpan(active)?.isRecording() !== true
        ) {
          return method.apply(this, args);
        }
        const span = tracer.startSpan(spanName, undefined, active);
        const inSpan = trace.setSpan(active.setValue(TRACED_INSTANCE, instance), span);
        return context.with(inSpan, () => {
          let result: unknown;
          try {
            result = method.apply(this, args);
          } catch (error) {
            recordFailure(span, error);
            span.end();
            throw error;
          }
          if (result instanceof Promise) return endWith(span, () => result as Promise<unknown>);
          span.end();
          return result;
        });
      };
    }
    return instance;
  };
}
