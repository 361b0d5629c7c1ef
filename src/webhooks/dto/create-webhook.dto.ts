import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { ValidateIf } from 'class-validator';
import { IsText } from '../../common/validation/is-text.decorator.js';

export const URL_LIMITS = { min: 1, max: 2048 };
export const DESCRIPTION_LIMITS = { min: 0, max: 255 };

/** The body of POST /webhooks. Unknown properties are dropped by the validation pipe. */
@ApiSchema({ name: 'NewWebhook' })
export class CreateWebhookDto {
  @ApiProperty({
    description:
      'Where every new plant is POSTed: an http or https URL on a public address (no user name or password in it)',
    format: 'uri',
    minLength: URL_LIMITS.min,
    maxLength: URL_LIMITS.max,
    examples: ['https://hooks.example.com/plant-store'],
  })
  @IsText(URL_LIMITS)
  url: string;

  @ApiProperty({
    required: false,
    description: 'What the subscription is for, for people',
    minLength: DESCRIPTION_LIMITS.min,
    maxLength: DESCRIPTION_LIMITS.max,
  })
  @ValidateIf((body: CreateWebhookDto) => body.description !== undefined)
  @IsText(DESCRIPTION_LIMITS)
  description?: string;
}
