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
