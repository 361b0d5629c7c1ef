import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, plantsClient, type PlantsClient } from '../support/plants-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

describe('the plant operations when the plants table is gone', () => {
  let api: TestApp;
  let client: PlantsClient;

  beforeAll(async () => {
    api = await createTestApp();
    client = plantsClient(api, await api.issueToken());
    await api.database.query('ALTER TABLE plants RENAME TO plants_elsewhere');
  });
  afterAll(() => api.close());

  it.each([
    ['POST /plants', () => client.create({ id: 1, name: 'Fern' })],
    ['GET /plants', () => client.list()],
    ['GET /plants/{id}', () => client.get(1)],
    ['PUT /plants/{id}', () => client.replace(1, { name: 'Fern' })],
    ['DELETE /plants/{id}', () => client.delete(1)],
  ])('%s answers 500 in the error shape, without SQL or table names', async (_, send) => {
    const response = await send();
    expectError(response, 500, /^internal server error$/);
    expect(response.body).not.toMatch(/plants|relation|SELECT|UPDATE|DELETE|INSERT/i);
  });
});
