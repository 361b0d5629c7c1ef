import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * `npm run test:upgrade`: the previous release upgraded to this tree and rolled back, as
 * replicas behind HAProxy under load.
 */
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/upgrade/*.upgrade-spec.ts'],
    globalSetup: ['test/support/global-setup.ts', 'test/support/build.global-setup.ts'],
    pool: 'forks',
    testTimeout: 300_000,
    // Building the previous release installs its dependencies from the registry.
    hookTimeout: 600_000,
  },
});
