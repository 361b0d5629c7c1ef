import { defineConfig } from 'vitest/config';

/**
 * Unit tests (`npm run test:unit`): no database, no build, as Nest's template keeps them.
 * The end-to-end tests have vitest.config.e2e.ts; `npm test` runs both.
 */
export default defineConfig({
  test: {
    include: ['test/unit/**/*.spec.ts', 'test/deploy/**/*.spec.ts'],
    pool: 'forks',
  },
});
