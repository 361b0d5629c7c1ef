import { ApiResponse, type HeadersObject } from '@nestjs/swagger';
import { ErrorSchema } from './error.schema.js';

/** Documents that the operation answers `status` with the Error shape. */
export function ApiErrorResponse(
  status: number,
  description: string,
  headers?: HeadersObject,
): MethodDecorator & ClassDecorator {
  return ApiResponse({ status, description, type: ErrorSchema, headers });
}

/** The header 429 and 503 answers carry. */
export const RETRY_AFTER_HEADER: HeadersObject = {
  'Retry-After': {
    description: 'Seconds to wait before the next request',
    required: true,
    schema: { type: 'integer', minimum: 0 },
  },
};

/** Documents the 503 every operation that reads or writes the database may answer. */
export const ApiDatabaseUnavailableResponse = () =>
  ApiErrorResponse(503, 'The database is unreachable or too slow; retry later', RETRY_AFTER_HEADER);
