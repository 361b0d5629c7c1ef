import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));
const COMMON = join(SRC, 'common');
const CONFIG = join(SRC, 'config');
const DATABASE = join(SRC, 'database');
/** The command-line entry points, beside main.ts. */
const CLI = join(SRC, 'cli');
/** The service's entry points: main.ts starts tracing, then server.ts the application. */
const SERVICE_ENTRY_POINTS = ['main.ts', 'server.ts'].map((file) => join(SRC, file));

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

/** `src/app.*.ts`, the application's edge, where the feature modules are gathered. */
const isAppEdge = (file: string) => dirname(file) === SRC && basename(file).startsWith('app.');

describe("src/app.*, the application's edge", () => {
  it('is imported only by itself and the entry points (src/main.ts, src/server.ts, src/cli/)', () => {
    expect(
      importsOutside(
        SRC,
        (file, target) =>
          !isAppEdge(target) ||
          isAppEdge(file) ||
          SERVICE_ENTRY_POINTS.includes(file) ||
          within(file, CLI),
      ),
    ).toEqual([]);
  });
});

describe('src/cli', () => {
  it('is imported by nothing outside it: its entry points stand at the top', () => {
    expect(
      importsOutside(SRC, (file, target) => within(file, CLI) || !within(target, CLI)),
    ).toEqual([]);
  });

  it('enables the compile cache before any other import, in every command', () => {
    const commands = sourceFiles(CLI).filter((file) => file.endsWith('.cli.ts'));
    expect(commands.length).toBeGreaterThan(0);
    const late = commands.filter(
      (file) => !readFileSync(file, 'utf8').startsWith("import './compile-cache.js';\n"),
    );
    expect(late.map((file) => relative(SRC, file))).toEqual([]);
  });
});

describe('src/common', () => {
  it('imports no layer and no feature: only itself and the configuration', () => {
    expect(importsOutside(COMMON, (_, target) => within(target, COMMON, CONFIG))).toEqual([]);
  });
});

describe('src/database', () => {
  it("imports no feature module: features register their entities and migrations at the application's edge", () => {
    expect(
      importsOutside(DATABASE, (_, target) => within(target, DATABASE, COMMON, CONFIG)),
    ).toEqual([]);
  });
});
