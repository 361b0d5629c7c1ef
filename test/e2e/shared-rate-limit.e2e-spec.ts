import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueToken, send, startService, type ServiceProcess } from '../support/built-service.js';
import { REDIS_SERVER, startRedisServer, type RedisServer } from '../support/redis-server.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

const LIMIT = 4;

// .ci/run installs redis-server; elsewhere, without it, this is skipped.
describe.skipIf(!REDIS_SERVER)(
  'the rate limit shared by replicas (REDIS_URL, the built service)',
  () => {
    let redis: RedisServer;
    let database: TestDatabase;
    let replicas: { service: ServiceProcess; url: string }[];

    beforeAll(async () => {
      redis = await startRedisServer();
      database = await createTestDatabase();
      const env = {
        ...database.env,
        REDIS_URL: redis.url,
        RATE_LIMIT_PER_MINUTE: String(LIMIT),
      };
      // One after the other: the first applies the migrations.
      replicas = [await startService(env), await startService(env)];
    });
    afterAll(async () => {
      await Promise.all((replicas ?? []).map(({ service }) => service.stop()));
      await redis?.stop();
      await database?.drop();
    });

    const list = (replica: number, token: string) =>
      send(`${replicas[replica].url}/plants?limit=1`, {
        headers: { authorization: `Bearer ${token}` },
      });

    it('counts a token once across every replica', async () => {
      const token = await issueToken(database, 'shared');
      const statuses = [];
      for (let i = 0; i < LIMIT + 2; i++) statuses.push((await list(i % 2, token)).status);
      expect(statuses).toEqual([...Array(LIMIT).fill(200), 429, 429]);

      const refused = await list(0, token);
      expect(JSON.parse(refused.body)).toMatchObject({ error: 429 });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    });

    it('keeps answering while Redis is down, each replica counting alone', async () => {
      const token = await issueToken(database, 'during-outage');
      await redis.stop();
      const statuses = [];
      for (let i = 0; i < 2 * LIMIT + 2; i++) statuses.push((await list(i % 2, token)).status);
      // Each replica allows LIMIT on its own: together twice the limit, and no 5xx.
      expect(statuses).toEqual([...Array(2 * LIMIT).fill(200), 429, 429]);
    });
  },
);
