import { IsISO8601, Matches } from 'class-validator';
import { afterEach, describe, expect, it } from 'vitest';
import { APP_SCOPES } from '../../src/app.scopes.js';
import { DateTimeProperty } from '../../src/common/validation/date-time.decorator.js';
import { READINGS_TABLE, readingsModule } from '../fixtures/readings.module.js';
import type { OpenApiDocument } from '../support/openapi-contract.js';
import { coverageGaps, fuzzOperations, type FuzzReport } from '../support/operation-fuzzer.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { TEST_OWNER_ROLE, TEST_SERVICE_ROLE } from '../support/test-database.js';

/** RFC 3339's date-time as a pattern: its form, none of its ranges. */
const RFC_3339_FORM = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** A fuzzing of two operations and their parent's create takes 1 to 20 s on a loaded machine. */
const FUZZ_RUN_MS = 120_000;

/**
 * The every-operation fuzzer against a module of a child resource (readings of a plant,
 * `POST /plants/{id}/readings` and `GET /readings/{id}`) whose one date-time field is
 * validated three ways: it must fail the first two and pass the shared decorator.
 */
describe('the every-operation fuzzer, on a module with a date-time field', () => {
  let api: TestApp;
  afterEach(() => api.close());

  const fuzzReadings = async (takenAt: PropertyDecorator[]): Promise<FuzzReport> => {
    api = await createTestApp({}, undefined, undefined, [readingsModule(takenAt)]);
    // Made as a migration would be: the owner's, the service's role granted its rights.
    await api.database.query(`${READINGS_TABLE};
      ALTER TABLE readings OWNER TO ${TEST_OWNER_ROLE};
      GRANT SELECT, INSERT, UPDATE, DELETE ON readings TO ${TEST_SERVICE_ROLE};
      GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO ${TEST_SERVICE_ROLE}`);
    const document = (await api.request({ url: '/openapi.json' })).json<OpenApiDocument>();
    return fuzzOperations(
      {
        document,
        token: await api.issueToken({ scopes: APP_SCOPES.all }),
        send: (request) => api.request(request),
      },
      { runsPerOperation: 100, only: ({ path }) => path.includes('readings') },
    );
  };

  it(
    'fails on the stock @IsISO8601(): it takes dates the document refuses, or serves back years it cannot write',
    async () => {
      await expect(fuzzReadings([IsISO8601()])).rejects.toThrow(
        /createReading: a request the document refuses was answered 201|contract broken:[^]*must match format "date-time"/,
      );
    },
    FUZZ_RUN_MS,
  );

  it(
    'fails with a document violation on a pattern of the RFC 3339 form: a date-time at the edge of the years is served back outside them (0000-01-01T00:00:00+23:59 as -000001-12-31T00:01:00.000Z)',
    async () => {
      await expect(fuzzReadings([Matches(RFC_3339_FORM)])).rejects.toThrow(
        /contract broken:[^]*must match format "date-time"/,
      );
    },
    FUZZ_RUN_MS,
  );

  it(
    'passes on the shared DateTimeProperty, reaching a 201 and a 4xx of both operations',
    async () => {
      const report = await fuzzReadings([
        DateTimeProperty({ description: 'When it was read', required: true }),
      ]);
      expect(coverageGaps(report)).toEqual([]);
      expect(report.operations.map(({ operationId }) => operationId)).toEqual([
        'createReading',
        'getReading',
      ]);
    },
    FUZZ_RUN_MS,
  );
});
