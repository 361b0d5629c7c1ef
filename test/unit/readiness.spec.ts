import type { HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DatabaseUnavailableError } from '../../src/database/database-errors.js';
import type { DatabaseWrites } from '../../src/database/database-writes.js';
import { ReadinessService } from '../../src/health/readiness.service.js';

const UP = { status: 'ok', info: {}, error: {}, details: { database: { status: 'up' } } };

/** A ReadinessService whose terminus check answers `answer` and counts its runs. */
function readinessAnswering(answer: () => Promise<unknown>) {
  const checks = { count: 0 };
  const health = {
    check: async (indicators: (() => unknown)[]) => {
      checks.count++;
      indicators.forEach((indicator) => indicator());
      return answer();
    },
  } as unknown as HealthCheckService;
  const indicatorChain = { withTimeout: () => indicatorChain };
  const database = { pingCheck: () => indicatorChain } as unknown as TypeOrmHealthIndicator;
  const writes = { acceptsWrites: true } as DatabaseWrites;
  return { readiness: new ReadinessService(health, database, writes), checks };
}

describe('ReadinessService', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('runs one database check a second, however many probes ask', async () => {
    const { readiness, checks } = readinessAnswering(async () => UP);
    const answers = await Promise.all(Array.from({ length: 100 }, () => readiness.check()));
    expect(answers.every((answer) => answer === answers[0])).toBe(true);
    vi.advanceTimersByTime(999);
    await readiness.check();
    expect(checks.count).toBe(1);
    vi.advanceTimersByTime(1);
    await readiness.check();
    expect(checks.count).toBe(2);
  });

  it('reports a failed check as the database being unavailable, to every probe of that second', async () => {
    const { ServiceUnavailableException } = await import('@nestjs/common');
    const down = { status: 'error', details: { database: { status: 'down', message: 'timeout' } } };
    const { readiness, checks } = readinessAnswering(async () => {
      throw new ServiceUnavailableException(down);
    });
    await expect(readiness.check()).rejects.toThrow(DatabaseUnavailableError);
    await expect(readiness.check()).rejects.toThrow(/timeout/);
    expect(checks.count).toBe(1);
  });
});
