import { applyDecorators } from '@nestjs/common';
import { ApiResponse, type HeadersObject } from '@nestjs/swagger';
import { BODY_LIMIT_BYTES } from '../http/http-app.js';
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

/**
 * For a controller whose operations use the database: the 503 of an unreachable
 * database, and the 500 no request should ever meet.
 */
export const ApiDatabaseBackedResponses = () =>
  applyDecorators(
    ApiErrorResponse(500, 'The service failed unexpectedly'),
    ApiDatabaseUnavailableResponse(),
  );

/** Fastify answers these for a JSON request body before the handler runs. */
export const ApiJsonBodyResponses = () =>
  applyDecorators(
    ApiErrorResponse(413, `The request body is larger than ${BODY_LIMIT_BYTES / 1024} KiB`),
    ApiErrorResponse(415, 'The request body is not application/json'),
  );
