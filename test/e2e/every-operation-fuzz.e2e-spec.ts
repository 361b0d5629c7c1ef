import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_SCOPES } from '../../src/app.scopes.js';
import { stringifyJson } from '../../src/common/json/json-codec.js';
import { fuzzParameters } from '../support/fuzz.js';
import { HOSTILE_BODIES } from '../support/hostile-json-bodies.js';
import { arbitraryFromSchema } from '../support/openapi-arbitraries.js';
import type { OpenApiDocument } from '../support/openapi-contract.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

type Schema = Record<string, unknown>;
interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: Schema;
}
interface DocumentedOperation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
}
interface Operation extends DocumentedOperation {
  method: string;
  path: string;
}

/** Generated requests per operation in CI (fixed seed; `npm run fuzz` runs many more). */
const RUNS_PER_OPERATION = 100;

/** Every operation of a document, by method and path template. */
function operationsOf(document: OpenApiDocument): Operation[] {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods as unknown as Record<string, DocumentedOperation>).map(
      ([method, operation]) => ({
        ...operation,
        method: method.toUpperCase(),
        path,
      }),
    ),
  );
}

/** A value as a URL carries it: a valid one of the schema, or any text at all. */
function parameterText(document: OpenApiDocument, schema: Schema): fc.Arbitrary<string> {
  const valid =
    schema.format === 'uuid' ? fc.uuid() : arbitraryFromSchema(document, schema).map(String);
  return fc.oneof(valid, fc.string({ unit: 'binary', maxLength: 40 }));
}

/** A JSON body: valid under the operation's schema, any JSON value, or not JSON at all. */
function bodyText(document: OpenApiDocument, schema: Schema): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: arbitraryFromSchema(document, schema).map(stringifyJson) },
    fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
    fc.string({ unit: 'binary', maxLength: 60 }),
  );
}

/** Requests for `operation`, from its parameters' and body's schemas in the document. */
function requestsFor(document: OpenApiDocument, operation: Operation) {
  const parameters = operation.parameters ?? [];
  const pathParameters = parameters.filter((parameter) => parameter.in === 'path');
  const queryParameters = parameters.filter((parameter) => parameter.in === 'query');
  const body = operation.requestBody?.content['application/json']?.schema;
  return fc.record({
    path: fc
      .tuple(...pathParameters.map(({ schema }) => parameterText(document, schema)))
      .map((values) =>
        pathParameters.reduce(
          (path, { name }, index) => path.replace(`{${name}}`, encodeURIComponent(values[index])),
          operation.path,
        ),
      ),
    query: fc.record(
      Object.fromEntries(
        queryParameters.map(({ name, schema }) => [name, parameterText(document, schema)]),
      ),
      { requiredKeys: queryParameters.filter((p) => p.required).map(({ name }) => name) },
    ),
    body: body ? fc.option(bodyText(document, body), { nil: undefined }) : fc.constant(undefined),
  });
}

/**
 * Every operation of the served OpenAPI document, whatever module it comes from, gets
 * requests generated from its own schemas (parameters and bodies, valid and not), and
 * the hostile-input suite's costliest bodies, sent with a token holding every scope.
 * (What those bodies cost is measured on one route in hostile-input-cost.e2e-spec.ts:
 * one JSON codec parses every operation's body, so their cost is the same on each.) None may be answered 5xx, and every answer must be
 * one the document declares, in its shape (the test app checks each one). A new
 * module's routes are fuzzed with no test code of their own; an operation of the
 * document that no request reached fails the coverage check.
 */
describe('every operation of the served document, fuzzed from its schemas (fast-check)', () => {
  let api: TestApp;
  let token: string;
  let document: OpenApiDocument;

  beforeAll(async () => {
    api = await createTestApp();
    token = await api.issueToken({ scopes: APP_SCOPES.all });
    document = (await api.request({ url: '/openapi.json' })).json<OpenApiDocument>();
  });
  afterAll(() => api.close());

  it('answers every generated request with a documented status, never 5xx, and reaches every operation', async () => {
    const exercised = new Map<string, Set<number>>();
    const operations = operationsOf(document);
    for (const operation of operations) {
      const statuses = new Set<number>();
      exercised.set(operation.operationId, statuses);
      await fc.assert(
        fc.asyncProperty(requestsFor(document, operation), async ({ path, query, body }) => {
          const response = await api.request({
            method: operation.method,
            url: path,
            query,
            headers: {
              authorization: `Bearer ${token}`,
              ...(body !== undefined && { 'content-type': 'application/json' }),
            },
            ...(body !== undefined && { payload: body }),
          });
          statuses.add(response.statusCode);
          expect(response.statusCode, `${operation.operationId}: ${response.body}`).toBeLessThan(
            500,
          );
        }),
        fuzzParameters(RUNS_PER_OPERATION),
      );
    }
    const unexercised = operations
      .map(({ operationId }) => operationId)
      .filter((operationId) => exercised.get(operationId)!.size === 0);
    expect(unexercised).toEqual([]);
    expect(operations.length).toBeGreaterThanOrEqual(14);
  });

  it('refuses the costliest JSON bodies at every operation that takes one, with a 4xx in the error shape', async () => {
    const withBodies = operationsOf(document).filter(({ requestBody }) => requestBody);
    expect(withBodies.length).toBeGreaterThanOrEqual(3);
    for (const { method, path, operationId } of withBodies) {
      // A path parameter that names nothing: the body is read before the id is looked up.
      const url = path.replace(/\{[^}]+\}/g, '1');
      for (const [shape, payload] of HOSTILE_BODIES) {
        const response = await api.request({
          method,
          url,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          payload,
        });
        expect(response.statusCode, `${operationId} with ${shape}`).toBeGreaterThanOrEqual(400);
        expect(response.statusCode, `${operationId} with ${shape}`).toBeLessThan(500);
        expect(response.json()).toEqual({
          error: response.statusCode,
          message: expect.any(String),
        });
      }
    }
  });
});
