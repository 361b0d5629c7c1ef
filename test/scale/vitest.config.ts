import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/** `npm run test:scale`: replicas behind HAProxy, through PgBouncer, with Redis. */
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/scale/*.scale-spec.ts'],
    globalSetup: ['test/support/global-setup.ts', 'test/support/build.global-setup.ts'],
    pool: 'forks',
    testTimeout: 120_000,
    hookTimeout: 90_000,
  },
});
