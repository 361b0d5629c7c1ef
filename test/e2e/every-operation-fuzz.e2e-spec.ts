import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_SCOPES } from '../../src/app.scopes.js';
import { HOSTILE_BODIES } from '../support/hostile-json-bodies.js';
import { coverageGaps, fuzzOperations, operationsOf } from '../support/operation-fuzzer.js';
import type { OpenApiDocument } from '../support/openapi-contract.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/** Generated requests per operation in CI (fixed seed; `npm run fuzz` runs many more). */
const RUNS_PER_OPERATION = 100;

/** A CI run takes 4 to 20 s on a loaded machine; a long one (FUZZ_RUNS) takes proportionally longer. */
const LONGEST_RUN_MS =
  120_000 * Math.max(1, Number(process.env.FUZZ_RUNS ?? 0) / RUNS_PER_OPERATION);

/**
 * FUZZ_ONLY=<regular expression> fuzzes the operations whose `METHOD /path` or operationId
 * it matches (`FUZZ_ONLY=harvests`: one module), with the creates of their parents.
 */
const only = process.env.FUZZ_ONLY ? new RegExp(process.env.FUZZ_ONLY) : undefined;

/**
 * Webhook receivers must be on a public address, a rule the document states in words: the
 * fuzzer registers these, allowed by WEBHOOK_ALLOWED_HOSTS, where nothing listens.
 */
const RECEIVERS = ['http://127.0.0.1:9/plant-store', 'http://127.0.0.1:9/hooks/new-plant?x=1'];

/**
 * Every operation of the served OpenAPI document, whatever module it comes from, gets
 * requests generated from its own schemas by a stateful fuzzer (test/support/operation-fuzzer.ts):
 * parents are created first and their ids used by the requests that name them; valid
 * requests must succeed, requests breaking one rule of the document must be a 4xx, those
 * without a token a 401, any text never a 5xx; and after every success the item and its
 * collection's list are read back. Every answer must be one the document declares, in its
 * shape (the test app checks each one). Each operation must answer a 2xx and a 4xx (when
 * the document lists one). Then the hostile-input suite's costliest bodies, sent with a
 * token holding every scope. (What those bodies cost is measured on one route in
 * hostile-input-cost.e2e-spec.ts: one JSON codec parses every operation's body, so their
 * cost is the same on each.) A new module's routes are fuzzed with no test code of their own.
 */
describe('every operation of the served document, fuzzed from its schemas (fast-check)', () => {
  let api: TestApp;
  let token: string;
  let document: OpenApiDocument;

  beforeAll(async () => {
    api = await createTestApp({ WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' });
    token = await api.issueToken({ scopes: APP_SCOPES.all });
    document = (await api.request({ url: '/openapi.json' })).json<OpenApiDocument>();
  });
  afterAll(() => api.close());

  it(
    'answers every generated request as the document says, reads back every success in its shape, and reaches a 2xx and a 4xx of every operation',
    async () => {
      const report = await fuzzOperations(
        { document, token, send: (request) => api.request(request) },
        {
          runsPerOperation: RUNS_PER_OPERATION,
          formats: { uri: fc.constantFrom(...RECEIVERS) },
          only:
            only &&
            (({ method, path, operationId }) =>
              only.test(`${method} ${path}`) || only.test(operationId)),
        },
      );
      expect(coverageGaps(report)).toEqual([]);
      expect(report.operations.length).toBeGreaterThanOrEqual(only ? 1 : 14);
    },
    LONGEST_RUN_MS,
  );

  it('refuses the costliest JSON bodies at every operation that takes one, with a 4xx in the error shape', async () => {
    const withBodies = operationsOf(document).filter(({ body }) => body);
    expect(withBodies.length).toBeGreaterThanOrEqual(3);
    for (const { method, path, operationId, mediaType } of withBodies) {
      // A path parameter that names nothing: the body is read before the id is looked up.
      const url = path.replace(/\{[^}]+\}/g, '1');
      for (const [shape, payload] of HOSTILE_BODIES) {
        const response = await api.request({
          method,
          url,
          headers: { authorization: `Bearer ${token}`, 'content-type': mediaType! },
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
