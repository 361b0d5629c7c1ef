import { defineConfig } from 'vitest/config';

/**
 * Tests that measure latency under load run alone, after the rest: beside other test
 * files on two cores, they would measure those files rather than the service.
 */
const UNDER_LOAD = [
  'test/e2e/anonymous-flood.e2e-spec.ts',
  'test/e2e/hostile-input-cost.e2e-spec.ts',
  'test/e2e/tracing-collector-outage.e2e-spec.ts',
  'test/e2e/webhooks-latency.e2e-spec.ts',
];

/**
 * End-to-end tests (`npm run test:e2e`) against a real PostgreSQL (see global-setup.ts)
 * and, for those that spawn it, the built service.
 */
export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts', 'test/support/build.global-setup.ts'],
    // Each test file gets its own process and its own database.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'suite',
          include: ['test/e2e/**/*.e2e-spec.ts'],
          exclude: UNDER_LOAD,
          // Two files at a time: most of a file's time is spent waiting (a service
          // starting or draining, a time-out running out), and Vitest's default on two
          // cores is one at a time, which made the suite about ten minutes a database.
          maxWorkers: 2,
          // Each worker process runs file after file, importing Nest, TypeORM and the
          // application once, not once per file: that took a tenth of the suite's CPU.
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'under-load',
          include: UNDER_LOAD,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
