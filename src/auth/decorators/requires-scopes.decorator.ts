import { applyDecorators, SetMetadata } from '@nestjs/common';
import {
  ApiErrorResponse,
  RETRY_AFTER_HEADER,
} from '../../common/openapi/api-error-response.decorator.js';
import type { Scope } from '../scopes.js';

export const REQUIRED_SCOPES = 'auth:requiredScopes';

/**
 * The token must hold every one of these scopes, otherwise 403. The operation's document
 * lists what BearerAuthGuard and the per-token rate limit answer.
 */
export const RequiresScopes = (...scopes: Scope[]) =>
  applyDecorators(
    SetMetadata(REQUIRED_SCOPES, scopes),
    ApiErrorResponse(
      401,
      'No valid bearer token: missing, malformed, unknown, expired or revoked',
      {
        'WWW-Authenticate': {
          description: 'The bearer challenge (RFC 6750)',
          required: true,
          schema: {
            type: 'string',
            examples: ['Bearer realm="plant-store", error="invalid_token"'],
          },
        },
      },
    ),
    ApiErrorResponse(403, `The token lacks the scope ${scopes.join(', ')}`),
    ApiErrorResponse(429, 'This token sent too many requests; retry later', RETRY_AFTER_HEADER),
  );
