import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));
const COMMON = join(SRC, 'common');
const CONFIG = join(SRC, 'config');
const DATABASE = join(SRC, 'database');
/** The application's edge, where the modules' entities and migrations are gathered. */
const APP_SCHEMA = join(SRC, 'app.schema.js');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

/** Each relative import of the files under `dir` that lands outside what `allowed` says. */
function importsOutside(dir: string, allowed: (file: string, target: string) => boolean) {
  return sourceFiles(dir).flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)]
      .map(([, specifier]) => resolve(dirname(file), specifier))
      .filter((target) => !allowed(file, target))
      .map((target) => `${relative(SRC, file)} imports ${relative(SRC, target)}`),
  );
}

const within = (target: string, ...roots: string[]) =>
  roots.some((root) => target.startsWith(`${root}/`));

describe('src/common', () => {
  it('imports no layer and no feature: only itself and the configuration', () => {
    expect(importsOutside(COMMON, (_, target) => within(target, COMMON, CONFIG))).toEqual([]);
  });
});

describe('src/database', () => {
  // Its command-line entry points are the application's edge too (as the token CLI is):
  // they read the gathered list, never a feature's.
  const isEntryPoint = (file: string) =>
    file.endsWith('.cli.ts') || basename(file) === 'typeorm-cli.data-source.ts';

  it("imports no feature module: features register their entities and migrations at the application's edge", () => {
    expect(
      importsOutside(
        DATABASE,
        (file, target) =>
          within(target, DATABASE, COMMON, CONFIG) || (isEntryPoint(file) && target === APP_SCHEMA),
      ),
    ).toEqual([]);
  });
});
