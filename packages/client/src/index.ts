export {
  InvalidWebhookError,
  type NewPlantWebhook,
  verifyNewPlantWebhook,
  type WebhookHeaders,
} from './new-plant-webhook.js';
export {
  createPlantStoreClient,
  type CreatedWebhook,
  type CreateRetryOptions,
  type ListPlantsQuery,
  type NewPlant,
  type NewWebhook,
  type Plant,
  type PlantReplacement,
  type PlantsPage,
  type PlantStoreClient,
  type PlantStoreClientOptions,
  type Redelivery,
  type RotatedWebhook,
  type SecretRotation,
  type StoredPlant,
  type Webhook,
  type WebhookSubscriptions,
} from './plant-store-client.js';
export { type ApiError, PlantStoreError } from './plant-store-error.js';
export type { components, operations, paths } from './generated/plant-store-api.js';
