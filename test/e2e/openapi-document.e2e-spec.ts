import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { OPENAPI_CLI } from '../support/built-service.js';
import { loginEnvironment } from '../support/login-environment.js';
import type { Exchange, OpenApiContract } from '../support/openapi-contract.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { describeOnEmbeddedRun } from '../support/test-database.js';

type Schema = {
  $ref?: string;
  allOf?: Schema[];
  type?: string;
  format?: string;
  required?: string[];
  properties?: Record<string, Schema>;
};
/** Documents are read loosely here: each check states the shape it expects. */
type AnyDocument = any;

/** An object schema with its `$ref`s and `allOf`s resolved: required names and property types. */
function flatten(
  document: AnyDocument,
  schema: Schema,
): Required<Pick<Schema, 'required' | 'properties'>> {
  if (schema.$ref) {
    const name = schema.$ref.replace('#/components/schemas/', '');
    return flatten(document, document.components!.schemas![name] as Schema);
  }
  const parts = [schema, ...(schema.allOf ?? []).map((part) => flatten(document, part))];
  return {
    required: parts.flatMap((part) => part.required ?? []).sort(),
    properties: Object.assign({}, ...parts.map((part) => part.properties ?? {})),
  };
}

describeOnEmbeddedRun('the OpenAPI document', () => {
  let api: TestApp;
  let served: AnyDocument;
  let seed: AnyDocument;
  let servedContract: OpenApiContract;
  let seedContract: OpenApiContract;

  beforeAll(async () => {
    api = await createTestApp();
    [servedContract, seedContract] = api.contracts;
    served = servedContract.document;
    seed = seedContract.document;
  });
  afterAll(() => api.close());

  describe('as served', () => {
    it('is at GET /openapi.json, without a token, and is a valid OpenAPI 3.1 document', async () => {
      const response = await api.request({ method: 'GET', url: '/openapi.json' });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      const document = response.json<AnyDocument>();
      expect(document.openapi).toBe('3.1.0');
      const validator = new Validator();
      const result = await validator.validate(document);
      expect(result.errors).toBeUndefined();
      expect(result.valid).toBe(true);
      expect(validator.version).toBe('3.1');
    });

    it('is at GET /openapi.yaml too, without a token, as the same document', async () => {
      const response = await api.request({ method: 'GET', url: '/openapi.yaml' });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toMatch(/^text\/yaml/);
      expect(parseYaml(response.body)).toEqual(served);
    });

    it('serves every operation it lists', async () => {
      const operations = servedContract.operations();
      expect(operations.length).toBeGreaterThanOrEqual(5);
      for (const { method, path } of operations) {
        const url = path.replaceAll(/\{[^}]+\}/g, '1');
        const response = await api.request({ method: method as 'GET', url });
        const isRouteMiss =
          response.statusCode === 404 && response.json().message.startsWith('Cannot ');
        expect(isRouteMiss, `${method} ${path}`).toBe(false);
      }
    });

    it('documents 401 with WWW-Authenticate, 403 and 429 with Retry-After for every operation needing a token', () => {
      for (const { method, path } of servedContract.operations()) {
        const operation = served.paths[path][method.toLowerCase()];
        const needsNoToken = operation.security?.every(
          (requirement: object) => Object.keys(requirement).length === 0,
        );
        if (needsNoToken) continue;
        expect(operation.responses['401'].headers['WWW-Authenticate'].required).toBe(true);
        expect(operation.responses['403']).toBeDefined();
        expect(operation.responses['429'].headers['Retry-After'].required).toBe(true);
      }
    });

    it('documents the Link header of GET /plants', () => {
      expect(served.paths['/plants'].get.responses['200'].headers.Link).toBeDefined();
    });
  });

  describe('as committed in openapi.json', () => {
    const COMMITTED = new URL('../../openapi.json', import.meta.url);

    it('is the served document (`npm run openapi` rewrites the file)', async () => {
      const committed = JSON.parse(await readFile(COMMITTED, 'utf8'));
      expect(committed, 'openapi.json is stale: run `npm run openapi`').toEqual(served);
    });

    it('is what `npm run openapi` writes, with no database to reach', async () => {
      const directory = await mkdtemp(join(tmpdir(), 'openapi-'));
      try {
        const written = join(directory, 'openapi.json');
        await promisify(execFile)(process.execPath, [OPENAPI_CLI, written], {
          env: { ...loginEnvironment(), DATABASE_URL: 'postgres://nobody@127.0.0.1:1/nowhere' },
        });
        expect(await readFile(written, 'utf8')).toBe(await readFile(COMMITTED, 'utf8'));
      } finally {
        await rm(directory, { recursive: true, force: true });
      }
    });
  });

  describe('as a superset of the seed', () => {
    it('has the seed info, license, bearer security scheme and global security', () => {
      expect(served.info).toMatchObject({ title: seed.info.title, version: seed.info.version });
      expect(served.info.license).toEqual(seed.info.license);
      // The origin that serves it first, for its /docs page; the seed's server after it.
      expect(served.servers).toEqual([
        { url: '/', description: 'The origin that serves this document' },
        ...seed.servers,
      ]);
      expect(served.security).toEqual(seed.security);
      expect(served.components!.securitySchemes).toEqual(seed.components!.securitySchemes);
    });

    it('has every seed operation with its operationId, request body and responses', () => {
      for (const { method, path } of seedContract.operations()) {
        const seedOperation = seed.paths[path][method.toLowerCase()];
        const servedOperation = served.paths[path]?.[method.toLowerCase()];
        expect(servedOperation, `${method} ${path}`).toBeDefined();
        expect(servedOperation.operationId).toBe(seedOperation.operationId);
        expect(servedOperation.requestBody).toEqual(seedOperation.requestBody);
        for (const [status, response] of Object.entries<any>(seedOperation.responses)) {
          expect(servedOperation.responses[status]?.content).toEqual(response.content);
        }
      }
    });

    it.each([['NewPlant'], ['Plant'], ['Error']])(
      'keeps the schema %s: the same required fields, types and formats',
      (name) => {
        const expected = flatten(seed, { $ref: `#/components/schemas/${name}` });
        const actual = flatten(served, { $ref: `#/components/schemas/${name}` });
        expect(actual.required).toEqual(expected.required);
        for (const [property, { type, format }] of Object.entries(expected.properties)) {
          expect(actual.properties[property], `${name}.${property}`).toMatchObject({
            type,
            ...(format && { format }),
          });
        }
      },
    );
  });

  describe('the contract check the e2e tests rely on', () => {
    const exchange = (overrides: Partial<Exchange>): Exchange => ({
      method: 'POST',
      url: '/plants',
      statusCode: 200,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: '{"name":"Fern"}',
      ...overrides,
    });
    const problems = (overrides: Partial<Exchange>) =>
      api.contracts.flatMap((contract) => contract.problemsWith(exchange(overrides)));

    it('accepts conforming responses', () => {
      expect(problems({})).toEqual([]);
      expect(
        problems({
          method: 'GET',
          url: '/plants/9223372036854775807',
          body: '{"id":9223372036854775807,"name":"Fern","tag":""}',
        }),
      ).toEqual([]);
    });

    it.each([
      [
        'a Plant without name',
        { body: '{"tag":"x"}' },
        /served.*must have required property 'name'/,
      ],
      [
        'a Plant seen by the seed',
        { body: '{"tag":"x"}' },
        /seed.*must have required property 'name'/,
      ],
      [
        'an id written as a string',
        { method: 'GET', url: '/plants/1', body: '{"id":"1","name":"x"}' },
        /must be integer/,
      ],
      [
        'an id past int64',
        { method: 'GET', url: '/plants/1', body: '{"id":1e30,"name":"x"}' },
        /must match format "int64"/,
      ],
      ['an undocumented status', { statusCode: 418 }, /status 418 is not documented/],
      [
        'another media type',
        { headers: { 'content-type': 'text/plain' } },
        /content type "text\/plain"/,
      ],
      [
        '401 without WWW-Authenticate',
        { statusCode: 401, body: '{"error":401,"message":"no"}' },
        /header WWW-Authenticate is missing/,
      ],
      [
        'an error of another shape',
        { statusCode: 400, body: '{"statusCode":400}' },
        /required property 'error'/,
      ],
      [
        'an error of another shape on an unlisted route',
        { method: 'GET', url: '/nowhere', statusCode: 404, body: '{"message":"no"}' },
        /seed.*required property 'error'/,
      ],
      [
        'a body on a 204',
        { method: 'DELETE', url: '/plants/1', statusCode: 204, body: '{}' },
        /a body where none/,
      ],
    ])('flags %s', (_, overrides, problem) => {
      expect(problems(overrides as Partial<Exchange>).join('\n')).toMatch(problem);
    });
  });
});

describeOnEmbeddedRun('GET /docs', () => {
  let api: TestApp;

  beforeAll(async () => {
    api = await createTestApp();
  });
  afterAll(() => api.close());

  it('is a Swagger UI page, without a token, whose scripts come from the service itself', async () => {
    const page = await api.request({ method: 'GET', url: '/docs' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const scripts = [...page.body.matchAll(/<script src="([^"]+)"/g)].map((match) => match[1]);
    expect(scripts).toContain('./docs/swagger-ui-bundle.js');
    for (const script of scripts) {
      const asset = await api.request({
        method: 'GET',
        url: new URL(script, 'http://x/docs').pathname,
      });
      expect(asset.statusCode, script).toBe(200);
      expect(asset.headers['content-type']).toMatch(/javascript/);
    }
  });

  it('shows the served document', async () => {
    const init = await api.request({ method: 'GET', url: '/docs/swagger-ui-init.js' });
    expect(init.body).toContain('"operationId": "createPlant"');
  });

  it('answers a missing asset with the contract error', async () => {
    const response = await api.request({ method: 'GET', url: '/docs/missing.js' });
    expect(response.statusCode).toBe(404);
    expect(Object.keys(response.json()).sort()).toEqual(['error', 'message']);
  });
});
