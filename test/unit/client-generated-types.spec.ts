import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const GENERATOR = fileURLToPath(
  new URL('../../packages/client/scripts/generate-types.mjs', import.meta.url),
);

describe("the typed client's generated types", () => {
  it('are what openapi.json generates (`npm run openapi` regenerates them)', async () => {
    const check = promisify(execFile)(process.execPath, [GENERATOR, '--check']);
    await expect(check).resolves.toMatchObject({ stderr: '' });
  });
});
