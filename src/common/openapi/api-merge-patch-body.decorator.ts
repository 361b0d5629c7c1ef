import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiConsumes } from '@nestjs/swagger';
import { BODY_LIMIT_BYTES, MERGE_PATCH_MEDIA_TYPE } from '../http/http-app.js';
import { ApiErrorResponse } from './api-error-response.decorator.js';

/**
 * A PATCH's body, a JSON Merge Patch (RFC 7396) of `type`: documented under its media
 * type, with the 413 and 415 Fastify answers before the handler runs (any other media
 * type, application/json included, is 415).
 */
export const ApiMergePatchBody = (type: Function) =>
  applyDecorators(
    ApiConsumes(MERGE_PATCH_MEDIA_TYPE),
    ApiBody({ type, required: true }),
    ApiErrorResponse(413, `The request body is larger than ${BODY_LIMIT_BYTES / 1024} KiB`),
    ApiErrorResponse(415, `The request body is not ${MERGE_PATCH_MEDIA_TYPE}`),
  );
