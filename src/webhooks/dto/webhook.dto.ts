import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { WebhookSubscription } from '../entities/webhook-subscription.entity.js';

/** A subscription as the API shows it: never its secret, which only the create answers. */
@ApiSchema({ name: 'Webhook' })
export class WebhookDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'uri', description: 'Where new plants are POSTed' })
  url: string;

  @ApiProperty({ required: false, description: 'Absent when none was given' })
  description?: string;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description: 'When a delivery was last attempted; null before the first',
  })
  lastAttemptAt: string | null;

  @ApiProperty({
    type: 'integer',
    format: 'int32',
    nullable: true,
    description: "The receiver's HTTP status at the last attempt; null when it did not answer",
  })
  lastStatus: number | null;

  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'Why the last attempt got no answer (time-out, refused address…); null otherwise',
  })
  lastError: string | null;

  @ApiProperty({
    type: 'integer',
    format: 'int32',
    minimum: 0,
    description: 'Attempts that failed since the last success',
  })
  failuresInARow: number;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description:
      'The first failed attempt since the last success (or since it was enabled); null when the last attempt succeeded',
  })
  failingSince: string | null;

  @ApiProperty({
    description:
      'false once every attempt failed for WEBHOOK_DISABLE_AFTER_FAILING_MS (5 days by default): nothing is sent to it until POST /webhooks/{id}/enable',
  })
  enabled: boolean;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description: 'When it was disabled for failing; null while enabled',
  })
  disabledAt: string | null;
}

/** The answer to POST /webhooks: the subscription and, this once, its signing secret. */
@ApiSchema({ name: 'CreatedWebhook' })
export class CreatedWebhookDto extends WebhookDto {
  @ApiProperty({
    description:
      'The Standard Webhooks signing secret (`whsec_` and base64): shown once, keep it to verify deliveries',
    pattern: '^whsec_[A-Za-z0-9+/]+=*$',
  })
  secret: string;
}

/** The answer to POST /webhooks/{id}/rotate-secret: the new secret, shown this once. */
@ApiSchema({ name: 'RotatedWebhook' })
export class RotatedWebhookDto extends CreatedWebhookDto {
  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description:
      'Until when deliveries are signed with the previous secret too; null when it was retired at once (an overlap of 0)',
  })
  previousSecretExpiresAt: string | null;
}

/** The answer to POST /webhooks/{id}/redeliver. */
@ApiSchema({ name: 'Redelivery' })
export class RedeliveryDto {
  @ApiProperty({
    type: 'integer',
    format: 'int32',
    minimum: 0,
    description: 'Failed deliveries sent again from a first attempt',
  })
  redelivered: number;
}

export function toWebhookDto(subscription: WebhookSubscription): WebhookDto {
  const { id, url, description, createdAt, lastAttemptAt, lastStatus, lastError } = subscription;
  return {
    id,
    url,
    ...(description === null ? {} : { description }),
    createdAt: createdAt.toISOString(),
    lastAttemptAt: lastAttemptAt?.toISOString() ?? null,
    lastStatus,
    lastError,
    failuresInARow: subscription.failuresInARow,
    failingSince: subscription.failingSince?.toISOString() ?? null,
    enabled: !subscription.disabledAt,
    disabledAt: subscription.disabledAt?.toISOString() ?? null,
  };
}

/** `secret`: the new one, in clear, which the subscription stores only encrypted. */
export function toCreatedWebhookDto(
  subscription: WebhookSubscription,
  secret: string,
): CreatedWebhookDto {
  return { ...toWebhookDto(subscription), secret };
}

export function toRotatedWebhookDto(
  subscription: WebhookSubscription,
  secret: string,
): RotatedWebhookDto {
  return {
    ...toCreatedWebhookDto(subscription, secret),
    previousSecretExpiresAt: subscription.previousSecretExpiresAt?.toISOString() ?? null,
  };
}
