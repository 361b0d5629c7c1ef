import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATE_TIME_RANGE } from '../../src/common/validation/date-time.decorator.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

// A zone whose offsets in the years a date-time may name include seconds (local mean time).
const ZONE = 'America/New_York';

describe('date-times written through the data source, in any time zone of the process', () => {
  let api: TestApp;
  const zoneBefore = process.env.TZ;

  beforeAll(async () => {
    process.env.TZ = ZONE;
    api = await createTestApp();
  });
  afterAll(async () => {
    await api?.close();
    // The file's process may run other files next (vitest.config.e2e.ts: isolate).
    if (zoneBefore === undefined) delete process.env.TZ;
    else process.env.TZ = zoneBefore;
  });

  it.each([
    DATE_TIME_RANGE.min.toISOString(),
    '1883-11-18T16:59:59.999Z',
    '2026-07-01T12:30:00.500Z',
    DATE_TIME_RANGE.max.toISOString(),
  ])('stores %s as that instant', async (instant) => {
    expect(new Date(instant).getTimezoneOffset()).not.toBe(0);
    const [{ utc }] = await api.app
      .get(DataSource)
      .query(
        `SELECT to_char($1::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS utc`,
        [new Date(instant)],
      );
    expect(utc).toBe(instant);
  });
});
