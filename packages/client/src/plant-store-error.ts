import type { components } from './generated/plant-store-api.js';

/** The body of every error the service answers: `{error: <HTTP status>, message}`. */
export type ApiError = components['schemas']['Error'];

function isApiError(body: unknown): body is ApiError {
  const candidate = body as Partial<ApiError> | null;
  return typeof candidate?.error === 'number' && typeof candidate.message === 'string';
}

/** An answer other than 2xx, with the service's `{error, message}`. */
export class PlantStoreError extends Error implements ApiError {
  override name = 'PlantStoreError';
  /** The HTTP status, as the service's body states it. */
  readonly error: number;

  constructor(
    body: ApiError,
    /** The whole answer, e.g. for its `Retry-After` header. */
    readonly response: Response,
  ) {
    super(body.message);
    this.error = body.error;
  }

  /**
   * The error of a failed answer. One that is not in the service's shape (e.g. a proxy's
   * page) gets its status and text, so that callers see one error type.
   */
  static from(response: Response, body: unknown): PlantStoreError {
    if (isApiError(body)) return new PlantStoreError(body, response);
    const text = typeof body === 'string' && body !== '' ? body : response.statusText;
    return new PlantStoreError({ error: response.status, message: text }, response);
  }
}
