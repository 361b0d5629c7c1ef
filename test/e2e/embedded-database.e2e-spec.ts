import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokensService } from '../../src/auth/tokens.service.js';
import { AppConfig } from '../../src/config/app-config.js';
import { DatabaseServer } from '../../src/database/database-server.js';
import { buildApp } from '../support/test-app.js';

describe('without DATABASE_URL the service runs its own PostgreSQL in DATA_DIR', () => {
  let privateDir: string;
  let dataDir: string;
  const config = () => AppConfig.fromEnvironment({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  const postmasterPid = () => join(dataDir, 'postgres', 'postmaster.pid');
  const createPlant = (app: NestFastifyApplication, token: string, body: string) =>
    app.inject({
      method: 'POST',
      url: '/plants',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: body,
    });

  beforeAll(async () => {
    // A private parent (mode 0700, like a clone in `mktemp -d`) must not stop it.
    privateDir = await mkdtemp(join(tmpdir(), 'plant-store-embedded-'));
    dataDir = join(privateDir, 'data');
  });
  afterAll(() => rm(privateDir, { recursive: true, force: true }));

  it('initialises it on first start, keeps the data across restarts, and stops it on close', async () => {
    const first = await buildApp(config());
    const { secret } = await first.get(TokensService).create({
      name: 'embedded',
      scopes: ['plants:write'],
    });
    const created = await createPlant(first, secret, '{"id":9223372036854775807,"name":"Kept"}');
    expect(created.statusCode).toBe(200);
    expect(existsSync(postmasterPid())).toBe(true);
    await first.close();
    expect(existsSync(postmasterPid())).toBe(false);

    const second = await buildApp(config());
    const other = await createPlant(second, secret, '{"id":9223372036854775807,"name":"Other"}');
    expect(other.statusCode).toBe(409);
    const replay = await createPlant(second, secret, '{"id":9223372036854775807,"name":"Kept"}');
    expect(replay.statusCode).toBe(200);
    await second.close();
  });

  it('lets another process (the token CLI) join the running server without stopping it', async () => {
    const owner = await buildApp(config());
    const guest = await DatabaseServer.connect(config());
    const client = new pg.Client({ connectionString: guest.url });
    await client.connect();
    await client.query("INSERT INTO plants (id, name) VALUES (1, 'From the guest')");
    await client.end();
    await guest.onApplicationShutdown();
    expect(existsSync(postmasterPid())).toBe(true);

    const { secret } = await owner
      .get(TokensService)
      .create({ name: 'owner', scopes: ['plants:write'] });
    const replay = await createPlant(owner, secret, '{"id":1,"name":"From the guest"}');
    expect(replay.statusCode).toBe(200);
    await owner.close();
    expect(existsSync(postmasterPid())).toBe(false);
  });
});
