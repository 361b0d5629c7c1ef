import type { Type } from '@nestjs/common';
import { Test, type TestingModuleBuilder } from '@nestjs/testing';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { AppModule } from '../../src/app.module.js';
import { TokensService } from '../../src/auth/tokens.service.js';
import { initApp } from '../../src/app.setup.js';
import { createHttpAdapter, HTTP_APP_OPTIONS } from '../../src/common/http/http-app.js';
import { AppConfig } from '../../src/config/app-config.js';
import { API_DOCS_PATHS } from '../../src/openapi/serve-api-docs.js';
import { type OpenApiContract, loadContracts } from './openapi-contract.js';
import { TEST_WEBHOOK_SECRET_KEYS } from './webhook-secret-keys.js';
import {
  createTestDatabase,
  type TestDatabase,
  type TestDatabaseOptions,
} from './test-database.js';
import { cliActor } from '../../src/audit/actor.js';

export interface TestApp {
  app: NestFastifyApplication;
  database: TestDatabase;
  /**
   * Sends a request through the whole HTTP stack (Fastify, guards, pipes, filter) and
   * fails when the response breaks the served OpenAPI document or the seed.
   */
  request(options: InjectOptions): Promise<LightMyRequestResponse>;
  /** The served document, then the seed. */
  contracts: OpenApiContract[];
  /** Issues a token through the token store, as `npm run token -- create` does. */
  issueToken(options?: { scopes?: string[]; expiresInMs?: number; name?: string }): Promise<string>;
  revokeToken(name: string): Promise<void>;
  close(): Promise<void>;
}

let tokenCounter = 0;

/** Replaces providers of the application under test, e.g. with `overrideProvider`. */
export type Customize = (module: TestingModuleBuilder) => TestingModuleBuilder;

/**
 * The real application (AppModule with every global) on a fresh database of its own,
 * built by the Nest test harness exactly as main.ts builds it. It logs nothing unless
 * `env` sets LOG_LEVEL. `modules` are imported beside AppModule (a test's own fixture).
 */
export async function createTestApp(
  env: Record<string, string> = {},
  customize?: Customize,
  databaseOptions?: TestDatabaseOptions,
  modules: Type[] = [],
): Promise<TestApp> {
  const database = await createTestDatabase(databaseOptions);
  const app = await buildApp(
    AppConfig.fromEnvironment({
      LOG_LEVEL: 'silent',
      RATE_LIMIT_PER_MINUTE: '0',
      WEBHOOK_SECRET_KEYS: TEST_WEBHOOK_SECRET_KEYS,
      ...env,
      ...database.env,
    }),
    customize,
    modules,
  );
  const tokens = app.get(TokensService);
  // From an address of its own, so as not to spend the tests' rate limit budget.
  const contracts = await loadContracts(
    (
      await app.inject({ method: 'GET', url: API_DOCS_PATHS.json, remoteAddress: '192.0.2.1' })
    ).json(),
  );
  return {
    app,
    database,
    contracts,
    request: async (options) => {
      const response = await app.inject(options);
      const { method = 'GET', url = '' } = response.raw.req;
      const exchange = { ...response, method, url, body: response.body };
      const problems = contracts.flatMap((contract) => contract.problemsWith(exchange));
      if (problems.length > 0) throw new Error(`contract broken:\n${problems.join('\n')}`);
      return response;
    },
    issueToken: async ({ scopes = ['plants:read', 'plants:write'], expiresInMs, name } = {}) =>
      (
        await tokens.create(
          { name: name ?? `test-${++tokenCounter}`, scopes, expiresInMs },
          cliActor(),
        )
      ).secret,
    revokeToken: async (name) => {
      await tokens.revoke(name, cliActor());
    },
    close: async () => {
      await app.close();
      await database.drop();
    },
  };
}

/** The application as main.ts builds it, on the given configuration. */
export async function buildApp(
  config: AppConfig,
  customize: Customize = (module) => module,
  modules: Type[] = [],
): Promise<NestFastifyApplication> {
  const moduleRef = await customize(
    Test.createTestingModule({ imports: [AppModule, ...modules] })
      .overrideProvider(AppConfig)
      .useValue(config),
  ).compile();
  moduleRef.useLogger(process.env.TEST_LOGS ? ['error', 'warn'] : false);
  const app = moduleRef.createNestApplication<NestFastifyApplication>(
    createHttpAdapter(config),
    HTTP_APP_OPTIONS,
  );
  try {
    await initApp(app);
  } catch (error) {
    // As main.ts does: a start refused leaves no database session behind.
    await app.close();
    throw error;
  }
  await app.getHttpAdapter().getInstance().ready();
  return app;
}
