import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/test-app.js';

interface NewPlant {
  id: number;
  name: string;
  tag?: string;
}

/** A fixed shuffle, so that requests for one id are spread across the burst. */
function shuffled<T>(items: T[]): T[] {
  const result = [...items];
  let seed = 42;
  for (let i = result.length - 1; i > 0; i--) {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    const j = seed % (i + 1);
    [result[i], result[j]] = [result[j], result[i]];
  }
  return result;
}

const contentOf = ({ name, tag }: { name: string; tag?: string | null }) =>
  tag === undefined || tag === null ? { name } : { name, tag };

/**
 * Creates that arrive while a statement is in flight share the next one (group commit),
 * and so do reads. Whatever shares a statement, each request is answered for its own row.
 */
describe('POST /plants and GET /plants/{id}, many at once', () => {
  let api: TestApp;
  let token: string;

  const post = (plant: NewPlant) =>
    api.request({
      method: 'POST',
      url: '/plants',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: plant,
    });

  beforeAll(async () => {
    api = await createTestApp();
    token = await api.issueToken();
  });
  afterAll(() => api.close());

  it('answers concurrent creates, replays and conflicts of overlapping ids each by its own row', async () => {
    const existing = [1, 2, 3, 4, 5].map((id) => ({ id, name: `Old ${id}`, tag: 'old' }));
    for (const plant of existing) expect((await post(plant)).statusCode).toBe(200);

    const requests: NewPlant[] = [
      // Replays of existing plants (200) and other content for their ids (409).
      ...existing.flatMap((plant) => [plant, plant, plant]),
      ...existing.flatMap(({ id, name }) => [
        { id, name },
        { id, name, tag: 'new' },
      ]),
      // New ids, each created several times with identical content: all 200, one row.
      ...[11, 12, 13, 14, 15].flatMap((id) => Array(4).fill({ id, name: `Twin ${id}` })),
      // New ids wanted with different content (no tag, an empty tag, other names): one wins.
      ...[21, 22, 23, 24, 25].flatMap((id) => [
        { id, name: 'Rival' },
        { id, name: 'Rival', tag: '' },
        { id, name: 'Rival', tag: 'a' },
        { id, name: `Rival ${id}` },
      ]),
    ];
    const burst = shuffled(requests);
    const responses = await Promise.all(burst.map(post));

    const answered = burst.map((plant, i) => ({ plant, response: responses[i] }));
    for (const { plant, response } of answered) {
      expect([200, 409]).toContain(response.statusCode);
      if (response.statusCode === 200) expect(response.json()).toEqual(contentOf(plant));
    }
    const statusesFor = (id: number) =>
      answered.filter(({ plant }) => plant.id === id).map(({ response }) => response.statusCode);
    for (const { id } of existing)
      expect(statusesFor(id).sort()).toEqual([200, 200, 200, 409, 409]);
    for (const id of [11, 12, 13, 14, 15]) expect(statusesFor(id)).toEqual([200, 200, 200, 200]);
    for (const id of [21, 22, 23, 24, 25])
      expect(statusesFor(id).sort()).toEqual([200, 409, 409, 409]);

    // The database holds exactly the acknowledged rows, each as acknowledged.
    const rows = await api.database.query<{ id: string; name: string; tag: string | null }>(
      'SELECT id::text, name, tag FROM plants ORDER BY plants.id',
    );
    const acknowledged = new Map<number, object>();
    for (const plant of existing) acknowledged.set(plant.id, contentOf(plant));
    for (const { plant, response } of answered) {
      if (response.statusCode === 200) acknowledged.set(plant.id, contentOf(plant));
    }
    expect(rows.map(({ id, ...content }) => [Number(id), contentOf(content)])).toEqual(
      [...acknowledged].sort(([a], [b]) => a - b),
    );
  });

  it('answers a burst of reads of present, missing and repeated ids each with its own plant', async () => {
    for (const plant of [
      { id: 501, name: 'Read me' },
      { id: 502, name: 'Me too', tag: '' },
    ]) {
      expect((await post(plant)).statusCode).toBe(200);
    }
    const ids = shuffled([501, 501, 502, 502, 503, 501, 504, 502, 503]);
    const responses = await Promise.all(
      ids.map((id) =>
        api.request({
          method: 'GET',
          url: `/plants/${id}`,
          headers: { authorization: `Bearer ${token}` },
        }),
      ),
    );
    const expected: Record<number, [number, string]> = {
      501: [200, '{"id":501,"name":"Read me"}'],
      502: [200, '{"id":502,"name":"Me too","tag":""}'],
      503: [404, '{"error":404,"message":"there is no plant with id 503"}'],
      504: [404, '{"error":404,"message":"there is no plant with id 504"}'],
    };
    expect(responses.map((r) => [r.statusCode, r.body])).toEqual(ids.map((id) => expected[id]));
  });

  it('reads a plant as soon as its create is answered', async () => {
    const created = await post({ id: 601, name: 'Fresh' });
    expect(created.statusCode).toBe(200);
    const read = await api.request({
      method: 'GET',
      url: '/plants/601',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(read.body).toBe('{"id":601,"name":"Fresh"}');
  });

  it('stores every plant of a burst of distinct creates, answering each', async () => {
    const plants = Array.from({ length: 200 }, (_, i) => ({ id: 1_000 + i, name: `Plant ${i}` }));
    const responses = await Promise.all(plants.map(post));
    expect(responses.map((r) => r.statusCode)).toEqual(Array(200).fill(200));
    const [{ n }] = await api.database.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM plants WHERE id BETWEEN 1000 AND 1199',
    );
    expect(n).toBe(200);
  });
});
