import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.spec.ts', 'test/**/*.e2e-spec.ts'],
    globalSetup: ['test/support/global-setup.ts', 'test/support/build.global-setup.ts'],
    // Each test file gets its own process and its own database.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
