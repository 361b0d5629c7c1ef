import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../support/plants-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

describe('POST /plants', () => {
  let api: TestApp;
  let token: string;
  let nextId = 1000;

  const post = (payload: string | object, headers: Record<string, string> = {}) =>
    api.request({
      method: 'POST',
      url: '/plants',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        ...headers,
      },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });

  beforeAll(async () => {
    api = await createTestApp();
    token = await api.issueToken();
  });
  afterAll(() => api.close());

  it('creates a plant and answers 200 with the seed Plant shape, without id', async () => {
    const response = await post({ id: nextId++, name: 'Monstera', tag: 'tropical' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body).toBe('{"name":"Monstera","tag":"tropical"}');
  });

  it('omits tag from the answer when the plant has none', async () => {
    const response = await post({ id: nextId++, name: 'Fern' });
    expect(response.statusCode).toBe(200);
    expect(response.body).toBe('{"name":"Fern"}');
  });

  it('keeps an empty tag, which is a tag', async () => {
    const response = await post({ id: nextId++, name: 'Cactus', tag: '' });
    expect(response.body).toBe('{"name":"Cactus","tag":""}');
  });

  describe('int64 ids', () => {
    it.each([['9223372036854775807'], ['-9223372036854775808'], ['9007199254740993'], ['0']])(
      'stores %s without losing a digit',
      async (id) => {
        const body = `{"id":${id},"name":"edge ${id}"}`;
        expect((await post(body)).statusCode).toBe(200);
        const stored = await api.database.query(`SELECT id::text FROM plants WHERE id = ${id}`);
        expect(stored).toEqual([{ id }]);
        const replay = await post(body);
        expect(replay.statusCode).toBe(200);
        const conflict = await post(`{"id":${id},"name":"other"}`);
        expect(conflict.statusCode).toBe(409);
      },
    );

    it.each([
      ['77001.0', '77001'],
      ['7.7002e4', '77002'],
    ])('accepts %s as the integer %s, as JSON Schema does', async (literal, id) => {
      expect((await post(`{"id":${literal},"name":"written ${literal}"}`)).statusCode).toBe(200);
      expect(await api.database.query(`SELECT id::text FROM plants WHERE id = ${id}`)).toEqual([
        { id },
      ]);
    });

    it.each([
      ['9223372036854775808'],
      ['-9223372036854775809'],
      ['1.5'],
      ['1.0000000000000000001'],
      ['1e400'],
      ['"1"'],
      ['true'],
      ['null'],
      ['[1]'],
      ['{}'],
    ])('refuses id %s with 400', async (literal) => {
      expectError(await post(`{"id":${literal},"name":"bad"}`), 400, /id must be an integer/);
    });

    it('refuses a missing id with 400', async () => {
      expectError(await post({ name: 'no id' }), 400, /id must be an integer/);
    });
  });

  describe('name and tag', () => {
    it('accepts 255 characters counted as code points, emoji included', async () => {
      const name = '🌵'.repeat(255);
      const response = await post({ id: nextId++, name, tag: '🌿'.repeat(255) });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ name, tag: '🌿'.repeat(255) });
    });

    it.each([
      [{ name: '' }, /name must be 1 to 255 characters/],
      [{ name: 'x'.repeat(256) }, /name must be 1 to 255 characters/],
      [{ name: 'x', tag: 'x'.repeat(256) }, /tag must be 0 to 255 characters/],
      [{}, /name must be a string/],
      [{ name: 42 }, /name must be a string/],
      [{ name: null }, /name must be a string/],
      [{ name: 'x', tag: null }, /tag must be a string/],
      [{ name: 'x', tag: 7 }, /tag must be a string/],
      [{ name: 'nul\u0000byte' }, /U\+0000/],
      [{ name: 'x', tag: '\u0000' }, /U\+0000/],
    ])('refuses %j with 400', async (fields, message) => {
      expectError(await post({ id: nextId++, ...fields }), 400, message);
    });

    it('refuses a lone surrogate, which could not be stored as sent', async () => {
      expectError(await post(`{"id":${nextId++},"name":"\\ud800"}`), 400, /lone surrogate/);
    });

    it('ignores unknown properties and never stores them', async () => {
      const id = nextId++;
      const response = await post({ id, name: 'Aloe', color: 'green', __proto__x: 1 });
      expect(response.statusCode).toBe(200);
      expect(response.body).toBe('{"name":"Aloe"}');
    });

    it('is not fooled by a __proto__ key', async () => {
      const id = nextId++;
      const response = await post(`{"id":${id},"name":"Ivy","__proto__":{"tag":"polluted"}}`);
      expect(response.statusCode).toBe(200);
      expect(response.body).toBe('{"name":"Ivy"}');
    });
  });

  describe('replay and conflict', () => {
    it('answers an identical replay with 200 and stores one row', async () => {
      const id = nextId++;
      const first = await post({ id, name: 'Basil', tag: 'herb' });
      const again = await post({ id, name: 'Basil', tag: 'herb', ignored: true });
      expect(first.statusCode).toBe(200);
      expect(again.statusCode).toBe(200);
      expect(again.body).toBe(first.body);
      expect(
        await api.database.query(`SELECT count(*)::int AS n FROM plants WHERE id = ${id}`),
      ).toEqual([{ n: 1 }]);
    });

    it.each([
      [{ name: 'Basil', tag: 'spice' }],
      [{ name: 'Sweet basil', tag: 'herb' }],
      [{ name: 'Basil' }],
      [{ name: 'Basil', tag: '' }],
    ])(
      'answers the same id with other content (%j) with 409 and keeps the first',
      async (other) => {
        const id = nextId++;
        await post({ id, name: 'Basil', tag: 'herb' });
        expectError(await post({ id, ...other }), 409, new RegExp(`id ${id} already exists`));
        expect(await api.database.query(`SELECT name, tag FROM plants WHERE id = ${id}`)).toEqual([
          { name: 'Basil', tag: 'herb' },
        ]);
      },
    );

    it('answers 50 concurrent identical creates all with 200 and stores one row', async () => {
      const id = nextId++;
      const responses = await Promise.all(
        Array.from({ length: 50 }, () => post({ id, name: 'Rose', tag: 'flower' })),
      );
      expect(responses.map((r) => r.statusCode)).toEqual(Array(50).fill(200));
      expect(
        await api.database.query(`SELECT count(*)::int AS n FROM plants WHERE id = ${id}`),
      ).toEqual([{ n: 1 }]);
    });

    it('lets exactly one of 20 concurrent different creates of one id win', async () => {
      const id = nextId++;
      const responses = await Promise.all(
        Array.from({ length: 20 }, (_, i) => post({ id, name: `Contender ${i}` })),
      );
      const statuses = responses.map((r) => r.statusCode).sort();
      expect(statuses).toEqual([200, ...Array(19).fill(409)]);
      const winner = responses.find((r) => r.statusCode === 200)!.json();
      expect(await api.database.query(`SELECT name FROM plants WHERE id = ${id}`)).toEqual([
        winner,
      ]);
    });
  });

  describe('malformed requests', () => {
    it.each([
      ['{"id":1,"name":', /not valid JSON/],
      ['{"id":1,"name":"a",}', /not valid JSON/],
      ['{"id":1,"name":"a","name":"b"}', /not valid JSON.*[Dd]uplicate key/],
      ['[]', /JSON object/],
      ['"plant"', /JSON object/],
      ['null', /JSON object/],
      ['42', /JSON object/],
    ])('refuses the body %s with 400', async (body, message) => {
      expectError(await post(body), 400, message);
    });

    it('refuses a body nested more than 64 levels deep with 400, however deep', async () => {
      const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
      expect((await post(`{"id":7001,"name":"deep","x":${nested(63)}}`)).statusCode).toBe(200);
      for (const depth of [64, 3_000, 10_000]) {
        expectError(await post(`{"id":7002,"name":"deep","x":${nested(depth)}}`), 400, /64 levels/);
      }
    });

    it('refuses an empty body with 400', async () => {
      expectError(await post(''), 400, /empty/);
    });

    it('refuses a body that is not valid UTF-8 with 400', async () => {
      const response = await api.request({
        method: 'POST',
        url: '/plants',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: Buffer.from([0x7b, 0x22, 0x6e, 0xff, 0xfe, 0x22, 0x7d]),
      });
      expectError(response, 400, /UTF-8/);
    });

    it.each([['text/plain'], ['application/x-www-form-urlencoded'], ['application/xml']])(
      'refuses Content-Type %s with 415',
      async (contentType) => {
        expectError(
          await post('{"id":1,"name":"x"}', { 'content-type': contentType }),
          415,
          /Content-Type must be application\/json/,
        );
      },
    );

    it('accepts application/json with a charset', async () => {
      const response = await post(
        { id: nextId++, name: 'Sage' },
        { 'content-type': 'application/json; charset=utf-8' },
      );
      expect(response.statusCode).toBe(200);
    });

    it('refuses a compressed body with 415: only identity is read', async () => {
      const response = await post({ id: nextId++, name: 'Zipped' }, { 'content-encoding': 'gzip' });
      expectError(response, 415, /^Content-Encoding gzip is not supported/);
    });

    it('refuses a body over the limit with 413', async () => {
      expectError(await post({ id: nextId++, name: 'x'.repeat(100_000) }), 413, /too large/);
    });

    it('answers an unknown route with 404 in the error shape', async () => {
      const response = await api.request({ method: 'GET', url: '/no/such/route' });
      expectError(response, 404, /.+/);
    });
  });
});
