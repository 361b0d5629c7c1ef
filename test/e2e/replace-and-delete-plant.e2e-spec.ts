import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, plantsClient, type PlantsClient } from '../support/plants-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

describe('changing plants', () => {
  let api: TestApp;
  let client: PlantsClient;
  let nextId = 1;

  /** A new plant, Basil tagged herb; its id. */
  const createBasil = async () => {
    const id = nextId++;
    expect((await client.create({ id, name: 'Basil', tag: 'herb' })).statusCode).toBe(200);
    return id;
  };
  const stored = (id: number | string) =>
    api.database.query(`SELECT id::text, name, tag FROM plants WHERE id = ${id}`);

  beforeAll(async () => {
    api = await createTestApp();
    client = plantsClient(api, await api.issueToken());
  });
  afterAll(() => api.close());

  describe('PUT /plants/{id}', () => {
    it('replaces name and tag and answers the plant with its id', async () => {
      const id = await createBasil();
      const response = await client.replace(id, { name: 'Thai basil', tag: 'spice' });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(response.body).toBe(`{"id":${id},"name":"Thai basil","tag":"spice"}`);
      expect((await client.get(id)).body).toBe(response.body);
    });

    it('clears the tag when the body has none, and keeps an empty tag', async () => {
      const id = await createBasil();
      expect((await client.replace(id, { name: 'Basil' })).body).toBe(
        `{"id":${id},"name":"Basil"}`,
      );
      expect(await stored(id)).toEqual([{ id: String(id), name: 'Basil', tag: null }]);
      expect((await client.replace(id, { name: 'Basil', tag: '' })).body).toBe(
        `{"id":${id},"name":"Basil","tag":""}`,
      );
    });

    it('answers an unchanged replacement with 200 too', async () => {
      const id = await createBasil();
      const body = { name: 'Basil', tag: 'herb' };
      expect((await client.replace(id, body)).statusCode).toBe(200);
      expect((await client.replace(id, body)).statusCode).toBe(200);
    });

    it('accepts the plant as GET answers it, id included', async () => {
      const id = await createBasil();
      const plant = (await client.get(id)).json<object>();
      const response = await client.replace(id, { ...plant, name: 'Holy basil' });
      expect(response.body).toBe(`{"id":${id},"name":"Holy basil","tag":"herb"}`);
    });

    it('accepts the id of the path written another way, as an integer it is the same', async () => {
      const id = await createBasil();
      const response = await client.replace(id, `{"id":${id}.0,"name":"Basil"}`);
      expect(response.statusCode).toBe(200);
    });

    it('replaces a plant at the edge of int64 without losing a digit', async () => {
      const id = '-9223372036854775808';
      await client.create(`{"id":${id},"name":"lowest"}`);
      const response = await client.replace(id, `{"id":${id},"name":"still lowest","tag":"x"}`);
      expect(response.body).toBe(`{"id":${id},"name":"still lowest","tag":"x"}`);
      expect(await stored(id)).toEqual([{ id, name: 'still lowest', tag: 'x' }]);
    });

    it('refuses a body whose id differs from the path id with 400 and changes nothing', async () => {
      const id = await createBasil();
      const response = await client.replace(id, { id: id + 1, name: 'Other' });
      expectError(
        response,
        400,
        new RegExp(`body's id ${id + 1} differs from the path's id ${id}`),
      );
      expect(await stored(id)).toEqual([{ id: String(id), name: 'Basil', tag: 'herb' }]);
    });

    it.each([['"1"'], ['null'], ['1.5'], ['9223372036854775808']])(
      'refuses the body id %s with 400',
      async (bodyId) => {
        const response = await client.replace(await createBasil(), `{"id":${bodyId},"name":"x"}`);
        expectError(response, 400, /^id must be an integer/);
      },
    );

    it('does not create a plant: 404, and nothing is stored', async () => {
      expectError(await client.replace(77777, { name: 'Ghost' }), 404, /no plant with id 77777/);
      expect(await stored(77777)).toEqual([]);
    });

    it.each([
      [{ name: '' }, /name must be 1 to 255 characters/],
      [{ name: 'x'.repeat(256) }, /name must be 1 to 255 characters/],
      [{ name: 'x', tag: 'x'.repeat(256) }, /tag must be 0 to 255 characters/],
      [{}, /name must be a string/],
      [{ name: 'x', tag: null }, /tag must be a string/],
      [{ name: 'nul\u0000byte' }, /U\+0000/],
    ])('refuses %j with 400 and changes nothing', async (body, message) => {
      const id = await createBasil();
      expectError(await client.replace(id, body), 400, message);
      expect(await stored(id)).toEqual([{ id: String(id), name: 'Basil', tag: 'herb' }]);
    });

    it('ignores unknown properties and never stores them', async () => {
      const id = await createBasil();
      const response = await client.replace(id, { name: 'Basil', color: 'green' });
      expect(response.body).toBe(`{"id":${id},"name":"Basil"}`);
    });

    it.each([['abc'], ['1.5'], ['9223372036854775808']])(
      'refuses the path id %s with 400',
      async (id) => {
        expectError(await client.replace(id, { name: 'x' }), 400, /^id must be an integer/);
      },
    );

    it.each([
      ['', 400, /empty/],
      ['{"name":', 400, /not valid JSON/],
      ['[]', 400, /JSON object/],
    ])('refuses the body %j with %i', async (body, status, message) => {
      expectError(await client.replace(await createBasil(), body), status, message);
    });

    it('refuses a body that is not application/json with 415', async () => {
      const id = await createBasil();
      const response = await client.send('PUT', `/plants/${id}`, 'name=x', {
        'content-type': 'application/x-www-form-urlencoded',
      });
      expectError(response, 415, /Content-Type must be application\/json/);
    });

    it('refuses a body over the limit with 413', async () => {
      const id = await createBasil();
      expectError(await client.replace(id, { name: 'x'.repeat(100_000) }), 413, /too large/);
    });

    it('makes a replay of the old content a conflict, and of the new content a replay', async () => {
      const id = await createBasil();
      await client.replace(id, { name: 'Mint' });
      expectError(await client.create({ id, name: 'Basil', tag: 'herb' }), 409, /already exists/);
      expect((await client.create({ id, name: 'Mint' })).statusCode).toBe(200);
    });
  });

  describe('DELETE /plants/{id}', () => {
    it('answers 204 without a body, then the plant is gone: 404', async () => {
      const id = await createBasil();
      const response = await client.delete(id);
      expect(response.statusCode).toBe(204);
      expect(response.body).toBe('');
      expectError(await client.get(id), 404, new RegExp(`no plant with id ${id}`));
      expectError(await client.delete(id), 404, new RegExp(`no plant with id ${id}`));
      expect(await stored(id)).toEqual([]);
    });

    it('deletes a plant at the edge of int64', async () => {
      const id = '9223372036854775807';
      await client.create(`{"id":${id},"name":"highest"}`);
      expect((await client.delete(id)).statusCode).toBe(204);
      expect(await stored(id)).toEqual([]);
    });

    it('lets the id be created again afterwards, with any content', async () => {
      const id = await createBasil();
      await client.delete(id);
      const response = await client.create({ id, name: 'Oregano' });
      expect(response.statusCode).toBe(200);
      expect((await client.get(id)).body).toBe(`{"id":${id},"name":"Oregano"}`);
    });

    it.each([['abc'], ['1.5'], ['-9223372036854775809']])(
      'refuses the path id %s with 400',
      async (id) => {
        expectError(await client.delete(id), 400, /^id must be an integer/);
      },
    );

    it('refuses a request body that is invalid JSON with 400, and one over the limit with 413', async () => {
      const id = await createBasil();
      expectError(await client.send('DELETE', `/plants/${id}`, '{'), 400, /not valid JSON/);
      const large = JSON.stringify({ note: 'x'.repeat(100_000) });
      expectError(await client.send('DELETE', `/plants/${id}`, large), 413, /too large/);
      expect(await stored(id)).toHaveLength(1);
    });

    it('refuses a request body that is not JSON with 415, as every body is', async () => {
      const id = await createBasil();
      const response = await client.send('DELETE', `/plants/${id}`, 'please', {
        'content-type': 'text/plain',
      });
      expectError(response, 415, /Content-Type must be application\/json/);
      expect(await stored(id)).toHaveLength(1);
    });

    it('answers concurrent deletes of one plant with one 204 and 404 for the others', async () => {
      const id = await createBasil();
      const responses = await Promise.all(Array.from({ length: 10 }, () => client.delete(id)));
      expect(responses.map((response) => response.statusCode).sort()).toEqual([
        204,
        ...Array(9).fill(404),
      ]);
    });
  });
});
