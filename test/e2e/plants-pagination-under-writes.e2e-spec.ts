import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plantsClient, type PlantsClient, readAllPages } from '../support/plants-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/** Plants there from before the readers start until after they finish: ids 0, 10, …, 990. */
const STABLE_IDS = Array.from({ length: 100 }, (_, i) => i * 10);
/** Plants deleted while the readers page: ids 5, 15, …, 995. */
const DELETED_IDS = STABLE_IDS.map((id) => id + 5);
const READERS = 3;
const WRITERS = 3;

describe('GET /plants while plants are added and deleted', () => {
  let api: TestApp;
  let client: PlantsClient;

  beforeAll(async () => {
    api = await createTestApp();
    client = plantsClient(api, await api.issueToken());
    for (const id of [...STABLE_IDS, ...DELETED_IDS]) {
      await client.create({ id, name: `plant ${id}`, tag: 'paged' });
    }
  });
  afterAll(() => api.close());

  it('returns no plant twice and skips none that existed throughout', async () => {
    let reading = true;
    let writesWhileReading = 0;
    const added: number[] = [];
    const toDelete = [...DELETED_IDS];
    /** Ids between and beyond the existing ones, in random order. */
    const toAdd = Array.from({ length: 1200 }, (_, i) => i)
      .filter((id) => id % 5 !== 0)
      .sort(() => Math.random() - 0.5);
    const write = async () => {
      while (reading || toDelete.length > 0) {
        const id = toAdd.pop()!;
        expect((await client.create({ id, name: `new ${id}`, tag: 'paged' })).statusCode).toBe(200);
        added.push(id);
        const [deleted] = toDelete.splice(Math.floor(Math.random() * toDelete.length), 1);
        if (deleted !== undefined) expect((await client.delete(deleted)).statusCode).toBe(204);
        if (reading) writesWhileReading++;
      }
    };
    const read = async () => {
      const pages = await readAllPages(client, '/plants?tag=paged&limit=3');
      return pages.flat().map((plant) => plant.id);
    };

    const writing = Promise.all(Array.from({ length: WRITERS }, write));
    const readings = await Promise.all(Array.from({ length: READERS }, read));
    reading = false;
    await writing;

    expect(writesWhileReading).toBeGreaterThan(20);
    const known = new Set([...STABLE_IDS, ...DELETED_IDS, ...added]);
    for (const ids of readings) {
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.filter((id) => !known.has(id))).toEqual([]);
      expect(STABLE_IDS.filter((id) => !ids.includes(id))).toEqual([]);
    }
  });
});
