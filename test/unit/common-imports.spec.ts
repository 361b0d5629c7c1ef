import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));
const COMMON = join(SRC, 'common');
/** What shared code may lean on besides itself: the validated configuration. */
const ALLOWED = [join(SRC, 'config')];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

describe('src/common', () => {
  it('imports no layer and no feature: only itself and the configuration', () => {
    const upward = sourceFiles(COMMON).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)]
        .map(([, specifier]) => resolve(dirname(file), specifier))
        .filter((target) => ![COMMON, ...ALLOWED].some((root) => target.startsWith(`${root}/`)))
        .map((target) => `${relative(SRC, file)} imports ${relative(SRC, target)}`),
    );
    expect(upward).toEqual([]);
  });
});
