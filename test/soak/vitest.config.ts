import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/** `npm run soak`: the soak alone, never part of `npm test`. */
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/soak/soak.ts'],
    globalSetup: ['test/support/global-setup.ts', 'test/support/build.global-setup.ts'],
    pool: 'forks',
    testTimeout: (Number(process.env.SOAK_MINUTES ?? 5) + 2) * 60_000,
    hookTimeout: 60_000,
  },
});
