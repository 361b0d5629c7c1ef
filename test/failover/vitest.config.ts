import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * `npm run test:failover`: a primary and a synchronous standby of Debian's PostgreSQL 15,
 * failed over under load behind an endpoint that moves, with replicas of the built service.
 */
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/failover/*.failover-spec.ts'],
    globalSetup: ['test/support/build.global-setup.ts'],
    pool: 'forks',
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
