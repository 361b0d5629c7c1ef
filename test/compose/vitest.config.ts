import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * `npm run test:compose`: the project's Dockerfile and docker-compose.yml, built and run
 * on a container engine (not part of `npm test`; `.ci/run` runs it). Its steps build on
 * each other, in order.
 */
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/compose/*.compose-spec.ts'],
    pool: 'forks',
    testTimeout: 300_000,
    hookTimeout: 120_000,
    bail: 1,
  },
});
