import createClient from 'openapi-fetch';
import { type Answer, type Api, bodyOf, nextCursor, parseAs } from './answers.js';
import type { components, paths } from './generated/plant-store-api.js';
import { stringifyJson } from './json.js';
import { MODULES, type Modules } from './modules.js';

export type NewPlant = components['schemas']['NewPlant'];
/** A plant as POST /plants answers it: without its id. */
export type Plant = components['schemas']['Plant'];
/** A plant as the reads answer it, with its id. */
export type StoredPlant = components['schemas']['StoredPlant'];
export type PlantReplacement = components['schemas']['PlantReplacement'];
export type ListPlantsQuery = NonNullable<paths['/plants']['get']['parameters']['query']>;
export type NewWebhook = components['schemas']['NewWebhook'];
/** A subscription as POST /webhooks answers it: with its signing secret, shown this once. */
export type CreatedWebhook = components['schemas']['CreatedWebhook'];
/** A subscription with its delivery status, without its secret. */
export type Webhook = components['schemas']['Webhook'];
export type Redelivery = components['schemas']['Redelivery'];
export type SecretRotation = components['schemas']['SecretRotation'];
/** A subscription as rotate-secret answers it: with its new signing secret, shown this once. */
export type RotatedWebhook = components['schemas']['RotatedWebhook'];

export interface PlantsPage {
  plants: StoredPlant[];
  /** The `cursor` of the next page, from the `Link: <…>; rel="next"` header; none on the last. */
  nextCursor?: string;
}

/**
 * Retries of `create`. They are safe by the service's design: a replay of the same plant is
 * answered 200 like the first time, and a plant with the same id but other content 409, so
 * a retry after a lost answer can neither create a second plant nor overwrite one.
 */
export interface CreateRetryOptions {
  /** Attempts in all, the first one included; 1 turns retries off. Default 4. */
  attempts?: number;
  /** The delay before the first retry, doubled for each next one, with jitter. Default 200 ms. */
  baseDelayMs?: number;
  /** The longest delay, also when a 503's `Retry-After` asks for more. Default 5 s. */
  maxDelayMs?: number;
}

export interface PlantStoreClientOptions {
  /** Where the service is, e.g. `http://localhost:3000`. */
  baseUrl: string;
  /** A bearer token (`npm run token -- create` on the service). */
  token?: string;
  /** The fetch to send requests with; `globalThis.fetch` by default. */
  fetch?: (request: Request) => Promise<Response>;
  createRetry?: CreateRetryOptions;
}

/**
 * The webhook subscriptions, by their UUIDs; the token needs the scope `webhooks:manage`.
 * None is retried: a second POST /webhooks would subscribe the URL twice.
 */
export interface WebhookSubscriptions {
  /** POST /webhooks: every plant created from now on is POSTed to `url`, signed. */
  create(webhook: NewWebhook): Promise<CreatedWebhook>;
  /** Every subscription, oldest first (the service's pages, followed to the last). */
  list(): Promise<Webhook[]>;
  get(id: string): Promise<Webhook>;
  /** Its deliveries not sent yet are dropped. */
  delete(id: string): Promise<void>;
  /** Sends its failed deliveries again, each from a first attempt, with its webhook-id. */
  redeliver(id: string): Promise<Redelivery>;
  /** Enables it again after it was disabled for failing; an enabled one stays as it is. */
  enable(id: string): Promise<Webhook>;
  /**
   * Gives it a new signing secret, answered this once; the previous one also signs every
   * delivery for `overlapSeconds` more (a day by default, 0: retired at once).
   */
  rotateSecret(id: string, rotation?: SecretRotation): Promise<RotatedWebhook>;
}

/**
 * The plant operations, the webhook subscriptions in `webhooks`, and each generated module's
 * operations under its name (Modules). Ids are `bigint` both ways, without rounding. Every
 * answer other than 2xx is thrown as a PlantStoreError with the service's `{error, message}`.
 */
export interface PlantStoreClient extends Modules {
  /**
   * POST /plants. Retried (see CreateRetryOptions) when no answer arrives or the service
   * answers 503; any other answer is final.
   */
  create(plant: NewPlant): Promise<Plant>;
  get(id: bigint): Promise<StoredPlant>;
  replace(id: bigint, plant: PlantReplacement): Promise<StoredPlant>;
  delete(id: bigint): Promise<void>;
  /** One page of plants by ascending id. */
  listPage(query?: ListPlantsQuery): Promise<PlantsPage>;
  /** Every plant (with `tag`, every plant with that tag), following the pages' cursors. */
  plants(query?: Omit<ListPlantsQuery, 'cursor'>): AsyncGenerator<StoredPlant, void, undefined>;
  webhooks: WebhookSubscriptions;
}

const RETRY_DEFAULTS: Required<CreateRetryOptions> = {
  attempts: 4,
  baseDelayMs: 200,
  maxDelayMs: 5_000,
};

/** Subscriptions asked for a page: the most the service gives. */
const WEBHOOKS_PAGE = 100;

/** Exponential back-off with jitter, at least what `Retry-After` asks for, at most the cap. */
function retryDelay(retry: Required<CreateRetryOptions>, attempt: number, response?: Response) {
  const backOff = retry.baseDelayMs * 2 ** (attempt - 1);
  const jittered = backOff / 2 + (Math.random() * backOff) / 2;
  const retryAfterMs = Number(response?.headers.get('retry-after') ?? 0) * 1000 || 0;
  return Math.min(Math.max(jittered, retryAfterMs), retry.maxDelayMs);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function createPlantStoreClient(options: PlantStoreClientOptions): PlantStoreClient {
  const api = createClient<paths>({
    baseUrl: options.baseUrl,
    fetch: options.fetch,
    headers: options.token === undefined ? {} : { authorization: `Bearer ${options.token}` },
    bodySerializer: stringifyJson,
  });
  const retry = { ...RETRY_DEFAULTS, ...options.createRetry };

  const listPage = async (query: ListPlantsQuery = {}): Promise<PlantsPage> => {
    const answer = await api.GET('/plants', { params: { query }, parseAs });
    return {
      plants: bodyOf<StoredPlant[]>(answer),
      nextCursor: nextCursor(answer.response.headers.get('link')),
    };
  };

  const modules = Object.fromEntries(
    Object.entries(MODULES as Record<string, (api: Api) => object>).map(([name, operationsOf]) => [
      name,
      operationsOf(api),
    ]),
  ) as Modules;

  return {
    ...modules,
    async create(plant) {
      for (let attempt = 1; ; attempt++) {
        const isLast = attempt >= retry.attempts;
        let answer: Answer;
        try {
          answer = await api.POST('/plants', { body: plant, parseAs });
        } catch (failure) {
          // No answer: the plant may or may not be stored, and a replay settles which.
          if (isLast) throw failure;
          await sleep(retryDelay(retry, attempt));
          continue;
        }
        if (answer.response.status !== 503 || isLast) return bodyOf<Plant>(answer);
        await sleep(retryDelay(retry, attempt, answer.response));
      }
    },
    get: async (id) =>
      bodyOf<StoredPlant>(await api.GET('/plants/{id}', { params: { path: { id } }, parseAs })),
    replace: async (id, plant) =>
      bodyOf<StoredPlant>(
        await api.PUT('/plants/{id}', { params: { path: { id } }, body: plant, parseAs }),
      ),
    delete: async (id) => {
      bodyOf<void>(await api.DELETE('/plants/{id}', { params: { path: { id } }, parseAs }));
    },
    listPage,
    async *plants(query = {}) {
      let cursor: string | undefined;
      do {
        const page = await listPage({ ...query, cursor });
        yield* page.plants;
        cursor = page.nextCursor;
      } while (cursor !== undefined);
    },
    webhooks: {
      create: async (webhook) =>
        bodyOf<CreatedWebhook>(await api.POST('/webhooks', { body: webhook, parseAs })),
      async list() {
        const subscriptions: Webhook[] = [];
        let cursor: string | undefined;
        do {
          const answer = await api.GET('/webhooks', {
            params: { query: { limit: WEBHOOKS_PAGE, cursor } },
            parseAs,
          });
          subscriptions.push(...bodyOf<Webhook[]>(answer));
          cursor = nextCursor(answer.response.headers.get('link'));
        } while (cursor !== undefined);
        return subscriptions;
      },
      get: async (id) =>
        bodyOf<Webhook>(await api.GET('/webhooks/{id}', { params: { path: { id } }, parseAs })),
      delete: async (id) => {
        bodyOf<void>(await api.DELETE('/webhooks/{id}', { params: { path: { id } }, parseAs }));
      },
      redeliver: async (id) =>
        bodyOf<Redelivery>(
          await api.POST('/webhooks/{id}/redeliver', { params: { path: { id } }, parseAs }),
        ),
      enable: async (id) =>
        bodyOf<Webhook>(
          await api.POST('/webhooks/{id}/enable', { params: { path: { id } }, parseAs }),
        ),
      rotateSecret: async (id, rotation = {}) =>
        bodyOf<RotatedWebhook>(
          await api.POST('/webhooks/{id}/rotate-secret', {
            params: { path: { id } },
            body: rotation,
            parseAs,
          }),
        ),
    },
  };
}
