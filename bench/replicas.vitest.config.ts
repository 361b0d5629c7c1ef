import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * `npm run bench:replicas` (bench/replicas.ts): run by Vitest for the test helpers that
 * start the replicas, HAProxy and PgBouncer, and the database. Never part of `npm test`.
 */
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('..', import.meta.url)),
    include: ['bench/replicas.ts'],
    globalSetup: ['test/support/global-setup.ts', 'test/support/build.global-setup.ts'],
    pool: 'forks',
    testTimeout: 30 * 60_000,
    hookTimeout: 60_000,
  },
});
