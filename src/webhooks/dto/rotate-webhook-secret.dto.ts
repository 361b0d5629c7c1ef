import { ApiSchema } from '@nestjs/swagger';
import { IntegerProperty } from '../../common/validation/integer-property.decorator.js';
import { OptionalBody } from '../../common/validation/validation.pipe.js';

/** A day, as Svix gives: long enough to redeploy every receiver with the new secret. */
export const DEFAULT_OVERLAP_SECONDS = 86_400;
/** A week: a longer overlap leaves a secret that may have leaked valid for too long. */
export const OVERLAP_LIMITS = { min: 0, max: 604_800 };

/** The body of POST /webhooks/{id}/rotate-secret, which may be left out. */
@ApiSchema({ name: 'SecretRotation' })
@OptionalBody()
export class RotateWebhookSecretDto {
  // No `default` in the schema: openapi-typescript would make the property required.
  @IntegerProperty(OVERLAP_LIMITS, {
    required: false,
    description: `How long the previous secret still signs deliveries, beside the new one, in seconds: ${DEFAULT_OVERLAP_SECONDS} (a day) when left out; 0 retires it at once`,
  })
  overlapSeconds?: number;
}
