import { afterEach, describe, expect, it } from 'vitest';
import { APP_SCHEMA } from '../../src/app.schema.js';

const MIGRATIONS = APP_SCHEMA.migrations;
import {
  issueToken,
  runMigrationCli,
  send,
  startService,
  type ServiceProcess,
} from '../support/built-service.js';
import {
  createTestDatabase,
  TEST_SERVICE_ROLE,
  type TestDatabase,
} from '../support/test-database.js';

const REPLICAS = 3;

describe('migrations at start (the built service)', () => {
  let database: TestDatabase;
  const services: ServiceProcess[] = [];

  afterEach(async () => {
    await Promise.all(services.splice(0).map((service) => service.stop()));
    await database.drop();
  });

  it(`lets ${REPLICAS} replicas start together on an empty database: all become ready, and each migration runs once`, async () => {
    database = await createTestDatabase();
    const started = await Promise.all(
      Array.from({ length: REPLICAS }, () => startService({ ...database.env })),
    );
    services.push(...started.map(({ service }) => service));

    for (const { url } of started) {
      expect((await send(`${url}/health/ready`)).status).toBe(200);
    }
    const applied = await database.query<{ name: string }>('SELECT name FROM migrations');
    expect(applied.map(({ name }) => name).sort()).toEqual(
      MIGRATIONS.map((migration) => migration.name).sort(),
    );
  });

  it('leaves the schema alone with MIGRATIONS_AT_START=false, for a job to migrate', async () => {
    database = await createTestDatabase();
    const { service, url } = await startService({
      ...database.env,
      MIGRATIONS_AT_START: 'false',
    });
    services.push(service);
    expect(await database.query("SELECT to_regclass('plants') AS plants")).toEqual([
      { plants: null },
    ]);

    const job = await runMigrationCli(['run'], { ...database.env });
    expect(job).toMatchObject({
      code: 0,
      stderr: `applied ${MIGRATIONS.length} migration(s); granted role "${TEST_SERVICE_ROLE}" the service's rights\n`,
    });
    const token = await issueToken(database);
    const created = await send(`${url}/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{"id": 1, "name": "Fern"}',
    });
    expect(created.status).toBe(200);
  });
});
