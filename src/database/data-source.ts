import type { DataSourceOptions } from 'typeorm';
import { ApiToken } from '../auth/entities/api-token.entity.js';
import type { AppConfig } from '../config/app-config.js';
import { Plant } from '../plants/entities/plant.entity.js';
import { CreatePlantsAndApiTokens1763700000000 } from '../../migrations/1763700000000-CreatePlantsAndApiTokens.js';
import { IndexPlantsByTag1763800000000 } from '../../migrations/1763800000000-IndexPlantsByTag.js';
import { CreateWebhooks1763900000000 } from '../../migrations/1763900000000-CreateWebhooks.js';
import { IndexDueDeliveriesBySubscription1764000000000 } from '../../migrations/1764000000000-IndexDueDeliveriesBySubscription.js';
import { DisableFailingWebhooks1764100000000 } from '../../migrations/1764100000000-DisableFailingWebhooks.js';
import { WebhookDelivery } from '../webhooks/entities/webhook-delivery.entity.js';
import { WebhookEvent } from '../webhooks/entities/webhook-event.entity.js';
import { WebhookSubscription } from '../webhooks/entities/webhook-subscription.entity.js';

/** Listed, not globbed: the same list works compiled, under Vitest and in the TypeORM CLI. */
export const ENTITIES = [Plant, ApiToken, WebhookSubscription, WebhookEvent, WebhookDelivery];
export const MIGRATIONS = [
  CreatePlantsAndApiTokens1763700000000,
  IndexPlantsByTag1763800000000,
  CreateWebhooks1763900000000,
  IndexDueDeliveriesBySubscription1764000000000,
  DisableFailingWebhooks1764100000000,
];

/**
 * A frozen server cannot enforce its own statement_timeout, so `pg` bounds the wait for
 * an answer too, this much later.
 */
const CLIENT_TIMEOUT_MARGIN_MS = 1_000;

export type DatabaseLimits = Pick<
  AppConfig,
  | 'databasePoolSize'
  | 'databaseConnectTimeoutMs'
  | 'databaseStatementTimeoutMs'
  | 'throughTransactionPooler'
>;

/**
 * The longest a request waits for the database before its 503: a free connection, then
 * its statement, and the client's margin beyond it.
 */
export function databaseAnswerLimitMs(limits: DatabaseLimits): number {
  return (
    limits.databaseConnectTimeoutMs + limits.databaseStatementTimeoutMs + CLIENT_TIMEOUT_MARGIN_MS
  );
}

/**
 * The one definition of how the service talks to PostgreSQL. The limits (AppConfig's
 * DATABASE_* settings) make a stuck database cost a request seconds, not forever.
 */
export function dataSourceOptions(url: string, limits: DatabaseLimits): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: false,
    extra: {
      max: limits.databasePoolSize,
      application_name: 'plant-store',
      connectionTimeoutMillis: limits.databaseConnectTimeoutMs,
      // A transaction pooler refuses session settings at connect; there PostgreSQL's own
      // setting applies (docs/operations.md).
      statement_timeout: limits.throughTransactionPooler
        ? undefined
        : limits.databaseStatementTimeoutMs,
      query_timeout: limits.databaseStatementTimeoutMs + CLIENT_TIMEOUT_MARGIN_MS,
    },
  };
}
