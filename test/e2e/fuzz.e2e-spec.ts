import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringifyJson } from '../../src/common/json/json-codec.js';
import { INT64_MAX, INT64_MIN } from '../../src/common/validation/is-int64.decorator.js';
import { PLANTS_BY_ID } from '../../src/plants/plants-keyset.js';
import { fuzzParameters } from '../support/fuzz.js';
import { hostileBodies } from '../support/hostile-bodies.js';
import { arbitraryFromSchema, operationSchema } from '../support/openapi-arbitraries.js';
import { plantsClient, type PlantsClient } from '../support/plants-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

interface Content {
  name: string;
  tag?: string;
}

/** Ids that come up again and again, so that creates replay, conflict and replace. */
const ID_POOL = [0n, 2n ** 53n + 1n, INT64_MAX, INT64_MIN];
const idArbitrary = fc.oneof(fc.constantFrom(...ID_POOL), fc.bigInt(INT64_MIN, INT64_MAX));

/**
 * What the store holds after the acknowledged writes, by id (decimal digits). Every
 * answer the service gives is predicted from it, and the table must equal it.
 */
class StoreModel {
  readonly plants = new Map<string, Content>();

  static content({ name, tag }: Content): Content {
    return tag === undefined ? { name } : { name, tag };
  }

  /** POST /plants with a valid plant: 200 with the plant, or 409 for other content. */
  create(id: bigint, content: Content): { status: number; body?: string } {
    const existing = this.plants.get(String(id));
    if (existing && stringifyJson(existing) !== stringifyJson(content)) return { status: 409 };
    this.plants.set(String(id), content);
    return { status: 200, body: stringifyJson(content) };
  }

  replace(id: bigint, content: Content): { status: number; body?: string } {
    if (!this.plants.has(String(id))) return { status: 404 };
    this.plants.set(String(id), content);
    return { status: 200, body: stringifyJson({ id, ...content }) };
  }

  delete(id: bigint): { status: number } {
    return { status: this.plants.delete(String(id)) ? 204 : 404 };
  }

  get(id: bigint): { status: number; body?: string } {
    const plant = this.plants.get(String(id));
    return plant ? { status: 200, body: stringifyJson({ id, ...plant }) } : { status: 404 };
  }

  /** One page of GET /plants, and whether a next page follows. */
  list(limit: number, tag: string | undefined, afterId: bigint | undefined) {
    const matching = [...this.plants.entries()]
      .map(([id, content]) => ({ id: BigInt(id), ...content }))
      .filter((plant) => afterId === undefined || plant.id > afterId)
      .filter((plant) => tag === undefined || plant.tag === tag)
      .sort((a, b) => (a.id < b.id ? -1 : 1));
    return { body: stringifyJson(matching.slice(0, limit)), more: matching.length > limit };
  }
}

/** The response is the contract's error (test-app checked the body against the schema). */
function expectErrorStatus(response: LightMyRequestResponse, status: number) {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.json()).toEqual({ error: status, message: expect.any(String) });
}

describe('fuzzing the plant operations (fast-check, fixed seed; npm run fuzz for long runs)', () => {
  let api: TestApp;
  let token: string;
  let client: PlantsClient;
  let model: StoreModel;

  beforeAll(async () => {
    api = await createTestApp();
    token = await api.issueToken();
    client = plantsClient(api, token);
  });
  afterAll(() => api.close());

  /** Each run starts from an empty store, and ends with the table equal to the model. */
  const startRun = async () => {
    await api.database.query('DELETE FROM plants');
    model = new StoreModel();
  };
  const expectTableEqualsModel = async () => {
    const rows = await api.database.query<{ id: string; name: string; tag: string | null }>(
      'SELECT id::text, name, tag FROM plants ORDER BY id',
    );
    const stored = Object.fromEntries(
      rows.map(({ id, name, tag }) => [id, StoreModel.content({ name, tag: tag ?? undefined })]),
    );
    expect(stored).toEqual(Object.fromEntries(model.plants));
  };

  describe('requests generated from the served OpenAPI document', () => {
    /** A body valid under NewPlant or PlantReplacement, unknown properties included. */
    type Body = Record<string, unknown> & Content & { id?: bigint };
    type Command =
      | { kind: 'create'; body: Body & { id: bigint } }
      | { kind: 'replace'; id: bigint; body: Body }
      | { kind: 'delete'; id: bigint }
      | { kind: 'get'; id: bigint }
      | { kind: 'list'; limit?: number; tag?: string; cursor?: string };

    const commands = () => {
      const { document } = api.contracts[0];
      const schema = (method: string, path: string, parameter?: string) =>
        arbitraryFromSchema(document, operationSchema(document, method, path, parameter));
      // Plants with an id from the pool and a common content, now and then, so that
      // creates collide with each other.
      const collide = (body: fc.Arbitrary<unknown>) =>
        fc
          .tuple(
            body as fc.Arbitrary<Body>,
            fc.option(fc.constantFrom(...ID_POOL), { freq: 2 }),
            fc.option(fc.constantFrom({ name: 'Fern' }, { name: 'Fern', tag: '' }), { freq: 2 }),
          )
          .map(([generated, id, content]) => {
            const { tag: _, ...withoutTag } = generated;
            const body = content ? { ...withoutTag, ...content } : generated;
            return id === null || !('id' in body) ? body : { ...body, id };
          }) as fc.Arbitrary<Body & { id: bigint }>;
      const tag = fc.oneof(fc.constantFrom('', 'Fern'), schema('get', '/plants', 'tag'));
      return fc.array(
        fc.oneof(
          fc.record({
            kind: fc.constant('create' as const),
            body: collide(schema('post', '/plants')),
          }),
          fc.record({
            kind: fc.constant('replace' as const),
            id: idArbitrary,
            body: collide(schema('put', '/plants/{id}')),
          }),
          fc.record({ kind: fc.constant('delete' as const), id: idArbitrary }),
          fc.record({ kind: fc.constant('get' as const), id: idArbitrary }),
          fc.record(
            {
              kind: fc.constant('list' as const),
              limit: schema('get', '/plants', 'limit') as fc.Arbitrary<number>,
              tag: tag as fc.Arbitrary<string>,
              cursor: fc.oneof(
                idArbitrary.map((id) => PLANTS_BY_ID.cursorOf({ id, name: '', tag: null })),
                schema('get', '/plants', 'cursor') as fc.Arbitrary<string>,
              ),
            },
            { requiredKeys: ['kind'] },
          ),
        ),
        { minLength: 10, maxLength: 30 },
      );
    };

    /** Sends the command and checks the answer is exactly what the model predicts. */
    const run = async (command: Command) => {
      switch (command.kind) {
        case 'create': {
          const { id, name, tag } = command.body;
          const expected = model.create(id, StoreModel.content({ name, tag }));
          const response = await client.create(stringifyJson(command.body));
          expect(response.statusCode, response.body).toBe(expected.status);
          if (expected.body) expect(response.body).toBe(expected.body);
          return;
        }
        case 'replace': {
          const { id: bodyId, name, tag } = command.body;
          const response = await client.replace(command.id, stringifyJson(command.body));
          if (bodyId !== undefined && BigInt(bodyId) !== command.id) {
            return expectErrorStatus(response, 400);
          }
          const expected = model.replace(command.id, StoreModel.content({ name, tag }));
          expect(response.statusCode, response.body).toBe(expected.status);
          if (expected.body) expect(response.body).toBe(expected.body);
          return;
        }
        case 'delete':
          expect((await client.delete(command.id)).statusCode).toBe(
            model.delete(command.id).status,
          );
          return;
        case 'get': {
          const expected = model.get(command.id);
          const response = await client.get(command.id);
          expect(response.statusCode).toBe(expected.status);
          if (expected.body) expect(response.body).toBe(expected.body);
          return;
        }
        case 'list': {
          const { limit, tag, cursor } = command;
          const query = new URLSearchParams();
          if (limit !== undefined) query.set('limit', String(limit));
          if (tag !== undefined) query.set('tag', tag);
          if (cursor !== undefined) query.set('cursor', cursor);
          const response = await client.list(`?${query}`);
          const afterId =
            cursor === undefined
              ? undefined
              : (PLANTS_BY_ID.decode(cursor)?.[0] as bigint | undefined);
          if (cursor !== undefined && afterId === undefined)
            return expectErrorStatus(response, 400);
          const expected = model.list(limit ?? 20, tag, afterId);
          expect(response.statusCode).toBe(200);
          expect(response.body).toBe(expected.body);
          expect(response.headers.link !== undefined).toBe(expected.more);
        }
      }
    };

    it('answer exactly as a model of the store predicts, and store exactly what they acknowledge', async () => {
      await fc.assert(
        fc.asyncProperty(commands(), async (script) => {
          await startRun();
          for (const command of script) await run(command);
          await expectTableEqualsModel();
        }),
        fuzzParameters(50, 10),
      );
    }, 120_000);
  });

  describe('hostile bodies: odd but valid, or invalid in one way', () => {
    const requests = fc.array(
      fc.tuple(fc.constantFrom('POST', 'PUT'), hostileBodies(idArbitrary)),
      { minLength: 5, maxLength: 15 },
    );

    it('are never answered 5xx: valid ones as the model predicts, the rest 400 or 413, nothing else stored', async () => {
      await fc.assert(
        fc.asyncProperty(requests, async (script) => {
          await startRun();
          for (const [method, { payload, means }] of script) {
            const target = 'id' in means ? means.id : 1n;
            const response =
              method === 'POST'
                ? await client.send('POST', '/plants', payload as string)
                : await client.send('PUT', `/plants/${target}`, payload as string);
            if ('refused' in means) {
              expectErrorStatus(response, means.refused);
              continue;
            }
            const content = StoreModel.content(means.content);
            const expected =
              method === 'POST'
                ? model.create(means.id, content)
                : model.replace(means.id, content);
            expect(response.statusCode, response.body).toBe(expected.status);
            if (expected.body) expect(response.body).toBe(expected.body);
          }
          await expectTableEqualsModel();
          expect(Object.prototype).not.toHaveProperty('polluted');
        }),
        fuzzParameters(40, 10),
      );
    }, 120_000);
  });

  describe('hostile paths, query strings and headers', () => {
    /** Path segments for an id, with the id each one means, if any. */
    const PATH_IDS: Array<[segment: string, id?: bigint]> = [
      ['1', 1n],
      ['1e3', 1000n],
      ['1000.0', 1000n],
      ['-0', 0n],
      ['%31', 1n],
      [`${INT64_MAX}`, INT64_MAX],
      [`${INT64_MIN}`, INT64_MIN],
      [`${INT64_MAX + 1n}`],
      ['1.5'],
      ['+1'],
      ['%201'],
      ['01'],
      ['0x10'],
      ['١٢٣'],
      ['１２３'],
      ['%00'],
      ['%ZZ'],
      ['%FF'],
      ['%C3%28'],
      ['..%2F..%2Fetc%2Fpasswd'],
      ['9'.repeat(100)],
      ['NaN'],
      ['%F0%9F%8C%B5'],
      ['a'.repeat(2_000)],
    ];
    const QUERIES = [
      'limit=1&limit=2',
      'limit=1e2',
      'limit=%F0',
      'limit=0',
      'limit=101',
      'limit=-1',
      'limit=%205',
      'limit=99999999999999999999',
      'tag=%C3%28',
      'tag=%00',
      'tag=a&tag=b',
      `tag=${'t'.repeat(300)}`,
      'cursor=%FF',
      `cursor=${'A'.repeat(5_000)}`,
      'cursor=a&cursor=b',
      '__proto__[polluted]=1',
      'constructor[prototype][polluted]=1',
      '__proto__=polluted',
      'a[b][c]=1&&&==&',
    ];
    const printable = (maxLength: number) =>
      fc.string({
        unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)),
        maxLength,
      });

    const requestArbitrary = () =>
      fc.record(
        {
          method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'),
          path: fc.oneof(
            fc
              .constantFrom(...PATH_IDS)
              .map(([segment, id]) => ({ path: `/plants/${segment}`, id })),
            fc
              .constantFrom(
                '/plants',
                '/plants/',
                '//plants',
                '/PLANTS',
                '/plants/1/extra',
                '/plants;x=1',
                '/%2e%2e/plants',
              )
              .map((path) => ({ path, id: undefined })),
            fc
              .webPath()
              .map((path) => ({ path: path.startsWith('/') ? path : `/${path}`, id: undefined })),
          ),
          query: fc.oneof(fc.constant(''), fc.constantFrom(...QUERIES), fc.webQueryParameters()),
          authorization: fc.oneof(
            fc.constantFrom(
              (token: string) => `Bearer ${token}`,
              (token: string) => `bearer ${token}`,
              (token: string) => `Bearer  ${token}`,
              (token: string) => `Basic ${token}`,
              (token: string) => `Bearer ${token}x`,
              (token: string) => `Bearer ${token}, Bearer ${token}`,
              () => 'Bearer',
              () => `Bearer ${'x'.repeat(5_000)}`,
            ),
            printable(100).map((value) => () => value),
          ),
          contentType: fc.oneof(
            fc.constantFrom(
              'application/json',
              'application/json; charset=utf-8',
              'APPLICATION/JSON',
              'application/json;charset=UTF-16',
              'application/jsonx',
              'text/json',
              'application/json, text/plain',
              'multipart/form-data; boundary=x',
            ),
            printable(60),
          ),
          headers: fc.dictionary(fc.stringMatching(/^x-[a-z0-9-]{1,20}$/), printable(200), {
            maxKeys: 3,
          }),
          requestId: printable(300),
          body: fc.oneof(
            fc
              .record({ id: fc.constantFrom(...ID_POOL), name: fc.constantFrom('Fern', 'Ivy') })
              .map((plant) => ({ payload: stringifyJson(plant), plant })),
            printable(100).map((payload) => ({ payload, plant: undefined })),
          ),
        },
        { requiredKeys: ['method', 'path', 'query'] },
      );

    it('are never answered 5xx, errors keep their shape, and only a valid request writes', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(requestArbitrary(), { minLength: 5, maxLength: 15 }),
          async (requests) => {
            await startRun();
            for (const request of requests) {
              const authorization = request.authorization?.(token);
              const response = await api.request({
                method: request.method as 'GET',
                url: `${request.path.path}${request.query ? `?${request.query}` : ''}`,
                headers: {
                  ...request.headers,
                  ...(authorization === undefined ? {} : { authorization }),
                  ...(request.contentType === undefined
                    ? {}
                    : { 'content-type': request.contentType }),
                  ...(request.requestId === undefined ? {} : { 'x-request-id': request.requestId }),
                },
                payload: request.body?.payload,
              });
              expect(response.statusCode, response.body).toBeLessThan(500);
              if (request.method === 'OPTIONS' && response.statusCode === 204) {
                // OPTIONS needs no token: the path's methods.
                expect(response.headers.allow).toMatch(/^[A-Z]+(, [A-Z]+)*$/);
                continue;
              }
              if (response.statusCode >= 300 || !request.path.path.startsWith('/plants')) continue;

              // A success needs the token, as the only credential, on a path naming a plant
              // or the collection.
              expect(authorization).toMatch(new RegExp(`^bearer ${token}$`, 'i'));
              const { id } = request.path;
              if (request.path.path !== '/plants') expect(id).toBeDefined();
              const { plant } = request.body ?? {};
              const content = plant && StoreModel.content(plant);
              const expected =
                request.method === 'POST'
                  ? model.create(plant!.id, content!)
                  : request.method === 'PUT'
                    ? model.replace(id!, content!)
                    : request.method === 'DELETE'
                      ? model.delete(id!)
                      : id === undefined
                        ? { status: 200 }
                        : model.get(id);
              expect(response.statusCode, response.body).toBe(expected.status);
              if (request.method !== 'HEAD' && 'body' in expected && expected.body) {
                expect(response.body).toBe(expected.body);
              }
            }
            await expectTableEqualsModel();
            expect(Object.prototype).not.toHaveProperty('polluted');
          },
        ),
        fuzzParameters(40, 10),
      );
    }, 120_000);
  });
});
