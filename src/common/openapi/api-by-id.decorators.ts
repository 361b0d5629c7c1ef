import { ApiParam } from '@nestjs/swagger';
import { ApiErrorResponse } from './api-error-response.decorator.js';
import { INT64_SCHEMA } from './int64.schema.js';

/** The `id` path parameter of an operation on one resource named by a signed 64-bit id. */
export const ApiInt64IdParam = (description: string) =>
  ApiParam({ name: 'id', schema: INT64_SCHEMA, description });

/** The `id` path parameter of an operation on one resource named by a UUID. */
export const ApiUuidIdParam = (description: string) =>
  ApiParam({ name: 'id', schema: { type: 'string', format: 'uuid' }, description });

/** The 404 of an id that names no `resource` (a resource's name: "plant", "webhook"). */
export const ApiNotFoundResponse = (resource: string) =>
  ApiErrorResponse(404, `There is no ${resource} with this id`);
