import { inject } from 'vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  issueToken,
  runTokenCli,
  send,
  startService,
  type ServiceProcess,
} from '../support/built-service.js';
import { PGBOUNCER, startPgBouncer, type Pooler } from '../support/pgbouncer.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

// .ci/run installs pgbouncer; elsewhere, without it, this is skipped.
describe.skipIf(!PGBOUNCER)(
  'through PgBouncer 1.18 in transaction pooling mode (DATABASE_DIRECT_URL, the built service)',
  () => {
    let pooler: Pooler;
    let database: TestDatabase;
    let service: ServiceProcess;
    let url: string;
    let token: string;

    beforeAll(async () => {
      pooler = await startPgBouncer(inject('databaseAdminUrl'));
      database = await createTestDatabase();
      ({ service, url } = await startService({
        DATABASE_URL: pooler.urlFor(database.url),
        DATABASE_DIRECT_URL: database.url,
        DATABASE_MIGRATION_URL: database.migrationUrl,
      }));
      token = await issueToken(database, 'pooled');
    });
    afterAll(async () => {
      await service?.stop();
      await pooler?.stop();
      await database?.drop();
    });

    const call = (method: string, path: string, body?: unknown) =>
      send(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });

    it('creates in batches, replays, and reads, with many requests at once', async () => {
      const ids = Array.from({ length: 60 }, (_, i) => i + 1);
      const created = await Promise.all(
        ids.map((id) => call('POST', '/plants', { id, name: `p${id}` })),
      );
      expect(created.map(({ status }) => status)).toEqual(ids.map(() => 200));
      const replayed = await call('POST', '/plants', { id: 1, name: 'p1' });
      expect(replayed.status).toBe(200);
      const read = await Promise.all(ids.map((id) => call('GET', `/plants/${id}`)));
      expect(read.map(({ body }) => JSON.parse(body).name)).toEqual(ids.map((id) => `p${id}`));
      expect(await database.query('SELECT count(*)::int AS count FROM plants')).toEqual([
        { count: 60 },
      ]);
    });

    it('hears a revocation within a second, on its direct connection', async () => {
      expect((await call('GET', '/plants?limit=1')).status).toBe(200);
      const revoked = await runTokenCli(['revoke', 'pooled'], { ...database.env });
      expect(revoked.code).toBe(0);
      await expect
        .poll(async () => (await call('GET', '/plants?limit=1')).status, {
          timeout: 1_000,
          interval: 50,
        })
        .toBe(401);
    });
  },
);
