import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsText } from '../../common/validation/is-text.decorator.js';
import { TextProperty } from '../../common/validation/text-property.decorator.js';

export const URL_LIMITS = { min: 1, max: 2048 };
export const DESCRIPTION_LIMITS = { min: 0, max: 255 };
/**
 * What the service checks of a receiver URL's text before parsing it: http or https in
 * any case, then `://`, and no U+0000 (a text rule), as a JSON Schema `pattern`.
 */
export const RECEIVER_URL_PATTERN = '^[Hh][Tt][Tt][Pp][Ss]?://[^\\x00]*$';

/** The body of POST /webhooks. Unknown properties are dropped by the validation pipe. */
@ApiSchema({ name: 'NewWebhook' })
export class CreateWebhookDto {
  @ApiProperty({
    description:
      'Where every new plant is POSTed: an http or https URL on a public address (no user name or password in it)',
    format: 'uri',
    minLength: URL_LIMITS.min,
    maxLength: URL_LIMITS.max,
    pattern: RECEIVER_URL_PATTERN,
    examples: ['https://hooks.example.com/plant-store'],
  })
  @IsText(URL_LIMITS)
  url: string;

  @TextProperty(DESCRIPTION_LIMITS, {
    required: false,
    description: 'What the subscription is for, for people (no U+0000)',
  })
  description?: string;
}
