import type { ErrorClassifier } from '../common/filters/http-error.filter.js';

/**
 * Raised by readiness once a shutdown has begun: an expected 503, which tells load
 * balancers to send requests elsewhere, not a failure to log.
 */
export class ShuttingDownError extends Error {
  override name = 'ShuttingDownError';

  constructor() {
    super('the service is shutting down');
  }
}

/** A shutdown under way is a 503 for whoever asks (readiness, so far). */
export const classifyShutdownError: ErrorClassifier = (exception) =>
  exception instanceof ShuttingDownError ? { status: 503, message: exception.message } : undefined;
