import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PlantsReader } from '../../src/plants/plants.reader.js';
import {
  expectError,
  nextPageUrl,
  plantsClient,
  type PlantsClient,
  readAllPages,
} from '../support/plants-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const cursorOf = (text: string) => Buffer.from(text).toString('base64url');
const INT64_EDGE_IDS = [
  '-9223372036854775808',
  '-1',
  '0',
  '9007199254740993',
  '9223372036854775807',
];
/** A plant with an id JavaScript's numbers cannot hold, as JSON text. */
const edgePlant = (id: string) => `{"id":${id},"name":"edge","tag":"int64"}`;

describe('reading plants', () => {
  let api: TestApp;
  let client: PlantsClient;

  /** Creates plants with these ids, named after them, all with `tag`. */
  const createTagged = async (tag: string, ids: number[]) => {
    const responses = await Promise.all(
      ids.map((id) => client.create({ id, name: `plant ${id}`, tag })),
    );
    expect(responses.map((response) => response.statusCode)).toEqual(ids.map(() => 200));
  };

  beforeAll(async () => {
    api = await createTestApp();
    client = plantsClient(api, await api.issueToken());
  });
  afterAll(() => api.close());

  describe('GET /plants/{id}', () => {
    it('answers the plant with its id', async () => {
      await client.create({ id: 1, name: 'Monstera', tag: 'tropical' });
      const response = await client.get(1);
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(response.body).toBe('{"id":1,"name":"Monstera","tag":"tropical"}');
    });

    it('omits tag when the plant has none and keeps an empty tag', async () => {
      await client.create({ id: 2, name: 'Fern' });
      await client.create({ id: 3, name: 'Cactus', tag: '' });
      expect((await client.get(2)).body).toBe('{"id":2,"name":"Fern"}');
      expect((await client.get(3)).body).toBe('{"id":3,"name":"Cactus","tag":""}');
    });

    it.each(INT64_EDGE_IDS)('reads id %s and writes it back without losing a digit', async (id) => {
      await client.create(edgePlant(id));
      expect((await client.get(id)).body).toBe(edgePlant(id));
    });

    it.each([['4e0'], ['4.0'], ['40e-1']])(
      'reads the path id %s as the integer 4, as a body id would be',
      async (literal) => {
        await client.create({ id: 4, name: 'Four' });
        expect((await client.get(literal)).body).toBe('{"id":4,"name":"Four"}');
      },
    );

    it.each([
      ['9223372036854775808'],
      ['-9223372036854775809'],
      ['abc'],
      ['1.5'],
      ['01'],
      ['%2B1'],
      ['0x10'],
      ['1%20'],
      ['1e400'],
      ['true'],
    ])('refuses the path id %s with 400', async (id) => {
      expectError(await client.get(id), 400, /^id must be an integer from -9223372036854775808 to/);
    });

    it.each([
      ['%FF', /percent-encoded part of it does not decode/],
      ['%C3%28', /percent-encoded part of it does not decode/],
      ['9'.repeat(101), /path parameter is too long/],
    ])('refuses the path id %s, which the router cannot take, with 400', async (id, message) => {
      expectError(await client.get(id), 400, message);
    });

    it('answers 404 for an id no plant has', async () => {
      expectError(await client.get(404404), 404, /no plant with id 404404/);
    });
  });

  describe('GET /plants', () => {
    it('answers a JSON array of plants with their ids, by ascending id', async () => {
      await createTagged('order', [30, 10, 20]);
      const response = await client.list('?tag=order');
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(response.headers.link).toBeUndefined();
      expect(response.json()).toEqual([
        { id: 10, name: 'plant 10', tag: 'order' },
        { id: 20, name: 'plant 20', tag: 'order' },
        { id: 30, name: 'plant 30', tag: 'order' },
      ]);
    });

    it('answers pages of 20 by default', async () => {
      const ids = Array.from({ length: 25 }, (_, i) => 100 + i);
      await createTagged('twenty-five', ids);
      const pages = await readAllPages(client, '/plants?tag=twenty-five');
      expect(pages.map((page) => page.length)).toEqual([20, 5]);
      expect(pages.flat().map((plant) => plant.id)).toEqual(ids);
    });

    it('points to the next page with a Link header (RFC 8288) that keeps limit and tag', async () => {
      await createTagged('linked', [200, 201, 202, 203, 204]);
      const first = await client.list('?tag=linked&limit=2');
      expect(first.headers.link).toMatch(
        /^<\/plants\?limit=2&tag=linked&cursor=[A-Za-z0-9_-]+>; rel="next"$/,
      );
      const pages = await readAllPages(client, '/plants?tag=linked&limit=2');
      expect(pages.map((page) => page.map((plant) => plant.id))).toEqual([
        [200, 201],
        [202, 203],
        [204],
      ]);
    });

    it('has no Link on a last page that is exactly full', async () => {
      await createTagged('even', [300, 301, 302, 303]);
      const first = await client.list('?tag=even&limit=2');
      const second = await client.send('GET', nextPageUrl(first)!);
      expect(second.json()).toHaveLength(2);
      expect(second.headers.link).toBeUndefined();
    });

    it('pages across the whole int64 range without losing a digit', async () => {
      for (const id of INT64_EDGE_IDS) await client.create(edgePlant(id));
      const bodies: string[] = [];
      for (let url: string | undefined = '/plants?tag=int64&limit=2'; url !== undefined;) {
        const response = await client.send('GET', url);
        bodies.push(response.body);
        url = nextPageUrl(response);
      }
      const page = (...ids: string[]) => `[${ids.map(edgePlant).join(',')}]`;
      const [a, b, c, d, e] = INT64_EDGE_IDS;
      expect(bodies).toEqual([page(a, b), page(c, d), page(e)]);
    });

    it('filters by exact tag; `tag=` selects the empty tag, and untagged plants only show unfiltered', async () => {
      await client.create({ id: 400, name: 'empty tag', tag: '' });
      await client.create({ id: 401, name: 'no tag' });
      await client.create({ id: 402, name: 'similar tag', tag: 'Order' });
      expect((await client.list('?tag=')).json()).toEqual([
        { id: 3, name: 'Cactus', tag: '' },
        { id: 400, name: 'empty tag', tag: '' },
      ]);
      expect((await client.list('?tag=Order')).json()).toEqual([
        { id: 402, name: 'similar tag', tag: 'Order' },
      ]);
      const all = (await readAllPages(client, '/plants?limit=100')).flat();
      expect(all.map((plant) => plant.name)).toContain('no tag');
    });

    it('answers an empty array, without Link, when no plant matches', async () => {
      const response = await client.list('?tag=nothing%20here');
      expect(response.statusCode).toBe(200);
      expect(response.body).toBe('[]');
      expect(response.headers.link).toBeUndefined();
    });

    it('finds a tag written in any script', async () => {
      await createTagged('🌵 sukkulente', [500]);
      const response = await client.list(`?tag=${encodeURIComponent('🌵 sukkulente')}`);
      expect(response.json()).toEqual([{ id: 500, name: 'plant 500', tag: '🌵 sukkulente' }]);
    });

    it('accepts limit=1 and limit=100', async () => {
      await createTagged(
        'hundred',
        Array.from({ length: 101 }, (_, i) => 1000 + i),
      );
      for (const limit of [1, 100]) {
        const response = await client.list(`?tag=hundred&limit=${limit}`);
        expect(response.json()).toHaveLength(limit);
        expect(nextPageUrl(response)).toBeDefined();
      }
    });

    it('ignores unknown query parameters', async () => {
      expect((await client.list('?tag=order&sort=desc')).json()).toHaveLength(3);
    });

    it.each([['0'], ['101'], ['-1'], ['1.5'], ['abc'], [''], ['2&limit=3'], ['1e1']])(
      'refuses limit=%s with 400',
      async (limit) => {
        expectError(
          await client.list(`?limit=${limit}`),
          400,
          /^limit must be an integer from 1 to 100$/,
        );
      },
    );

    it.each([
      ['not base64url', 'xx'],
      ['empty', ''],
      ['not an id', cursorOf('abc')],
      ['past int64', cursorOf('9223372036854775808')],
      ['not written as the service writes it', cursorOf('007')],
      ['padded', `${cursorOf('7')}==`],
      ['with a stray character', `${cursorOf('7')}!`],
    ])('refuses a cursor that is %s with 400', async (_, cursor) => {
      expectError(await client.list(`?cursor=${encodeURIComponent(cursor)}`), 400, /^cursor /);
    });

    it('refuses a tag longer than 255 characters and a repeated tag with 400', async () => {
      expectError(await client.list(`?tag=${'x'.repeat(256)}`), 400, /^tag must be 0 to 255/);
      expectError(await client.list('?tag=a&tag=b'), 400, /^tag must be a string/);
    });
  });

  describe('PlantsReader, what PlantsModule exports for other modules', () => {
    it('finds a plant by its exact int64 id, and says whether one exists', async () => {
      await client.create(edgePlant('9223372036854775807'));
      const reader = api.app.get(PlantsReader);
      expect(await reader.find(9223372036854775807n)).toEqual({
        id: 9223372036854775807n,
        name: 'edge',
        tag: 'int64',
      });
      expect(await reader.exists(9223372036854775807n)).toBe(true);
      expect(await reader.find(-42n)).toBeNull();
      expect(await reader.exists(-42n)).toBe(false);
    });
  });
});
