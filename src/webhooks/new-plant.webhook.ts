import type { WebhooksObject } from '@nestjs/swagger';

const signatureHeader = (name: string, description: string, example: string) => ({
  name,
  in: 'header' as const,
  required: true,
  description,
  schema: { type: 'string', examples: [example] },
});

/**
 * The request the service sends to every subscription, as the seed's sample names it:
 * `/plant/webhook`, a POST of the NewPlant. It is written here rather than with
 * @ApiWebhook(), which documents a controller method that Nest would also serve as a
 * route of this service: this request is one the service sends, never one it receives.
 */
export const NEW_PLANT_WEBHOOKS: WebhooksObject = {
  '/plant/webhook': {
    post: {
      operationId: 'newPlantWebhook',
      summary: 'New plant',
      description:
        'Information about a new plant added to the store, sent once per new plant (never for a replay or a conflict) to every subscription, at least once: receivers drop repeats by webhook-id.',
      security: [],
      parameters: [
        signatureHeader(
          'webhook-id',
          'The message: one per plant and subscription, the same in every attempt',
          '0b6f1cbe-7a4f-4a4e-9d5c-4c1f0e6e2f11',
        ),
        signatureHeader(
          'webhook-timestamp',
          'When this attempt was signed, in Unix seconds',
          '1763900000',
        ),
        signatureHeader(
          'webhook-signature',
          'Standard Webhooks: `v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the subscription secret',
          'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
        ),
      ],
      requestBody: {
        description: 'Information about a new plant added to the store',
        required: true,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/NewPlant' } } },
      },
      responses: {
        '200': {
          description:
            'Return a 200 status to indicate that the data was received successfully (any 2xx is taken so); anything else, or no answer within WEBHOOK_TIMEOUT_MS, is retried',
        },
      },
    },
  },
};
