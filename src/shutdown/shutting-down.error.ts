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
