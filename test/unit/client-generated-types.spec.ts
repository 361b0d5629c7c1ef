import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const GENERATOR = fileURLToPath(
  new URL('../../packages/client/scripts/generate-types.mjs', import.meta.url),
);

describe("the typed client's generated files", () => {
  // A child process that loads TypeScript: over 5 s on a 2-core machine at load average 25.
  it(
    'are what openapi.json generates (`npm run openapi` regenerates them)',
    { timeout: 60_000 },
    async () => {
      const check = promisify(execFile)(process.execPath, [GENERATOR, '--check']);
      await expect(check).resolves.toMatchObject({ stderr: '' });
    },
  );
});
