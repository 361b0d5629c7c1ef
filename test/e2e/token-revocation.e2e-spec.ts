import { Test } from '@nestjs/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenCliModule } from '../../src/cli/token-cli.module.js';
import { TokensService } from '../../src/auth/tokens.service.js';
import { VerifiedTokenCache } from '../../src/auth/verified-token-cache.js';
import { AppConfig } from '../../src/config/app-config.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { cliActor } from '../../src/audit/actor.js';

/** Far longer than the test: only a revocation notice can make the service forget a token. */
const ONE_HOUR_MS = 3_600_000;
/** Bounds the wait for the notice; the test fails, rather than hangs, if it never comes. */
const MAX_POLLS = 1_000;

describe('a token revoked by another process (the token CLI)', () => {
  let api: TestApp;
  let nextId = 1;

  const createPlant = (secret: string) =>
    api.request({
      method: 'POST',
      url: '/plants',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      payload: { id: nextId++, name: 'Fern' },
    });

  beforeAll(async () => {
    api = await createTestApp({}, (module) =>
      module
        .overrideProvider(VerifiedTokenCache)
        .useValue(new VerifiedTokenCache(ONE_HOUR_MS, 100)),
    );
  });
  afterAll(() => api.close());

  /** The token CLI's own application: its own data source, connections and cache. */
  async function tokenCli() {
    const cli = await Test.createTestingModule({ imports: [TokenCliModule] })
      .overrideProvider(AppConfig)
      .useValue(AppConfig.fromEnvironment({ ...api.database.env, LOG_LEVEL: 'silent' }))
      .compile();
    await cli.init();
    return cli;
  }

  it('is refused by the running service although the service had it cached', async () => {
    const secret = await api.issueToken({ name: 'revoked-elsewhere' });
    expect((await createPlant(secret)).statusCode).toBe(200);

    const cli = await tokenCli();
    expect(await cli.get(TokensService).revoke('revoked-elsewhere', cliActor())).toBe(true);
    await cli.close();

    // The notice travels through PostgreSQL; wait for it without assuming how long it takes.
    let status = 200;
    for (let poll = 0; poll < MAX_POLLS && status === 200; poll++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      status = (await createPlant(secret)).statusCode;
    }
    expect(status).toBe(401);
  });

  it('is what the cache holds otherwise: a revocation without the notice goes unseen until the entry expires', async () => {
    const secret = await api.issueToken({ name: 'revoked-silently' });
    expect((await createPlant(secret)).statusCode).toBe(200);
    await api.database.query(
      "UPDATE api_tokens SET revoked_at = now() WHERE name = 'revoked-silently'",
    );
    expect((await createPlant(secret)).statusCode).toBe(200);
  });
});
