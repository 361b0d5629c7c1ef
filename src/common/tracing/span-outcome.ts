import { type Span, SpanStatusCode } from '@opentelemetry/api';

/** Marks the span failed with this error. */
export function recordFailure(span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  });
}

/** `outcome`, once the span is ended with it: failed, with the error, if it rejects. */
export function endWhenSettled<T>(span: Span, outcome: Promise<T>): Promise<T> {
  return outcome.then(
    (value) => {
      span.end();
      return value;
    },
    (error: unknown) => {
      recordFailure(span, error);
      span.end();
      throw error;
    },
  );
}

/** Runs `work` and ends the span with its outcome, whether it throws or rejects. */
export function endWith<T>(span: Span, work: () => Promise<T>): Promise<T> {
  let outcome: Promise<T>;
  try {
    outcome = work();
  } catch (error) {
    outcome = Promise.reject(error);
  }
  return endWhenSettled(span, outcome);
}
