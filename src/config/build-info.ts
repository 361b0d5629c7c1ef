import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Which release a process runs, and the commit it was built from. */
export interface BuildInfo {
  /** The semantic version in package.json. */
  readonly version: string;
  /** The commit's full hash, or `unknown`. */
  readonly revision: string;
}

/** Names the revision where there is no git checkout: the image sets it from its build argument. */
export const REVISION_VARIABLE = 'PLANT_STORE_REVISION';
export const UNKNOWN_REVISION = 'unknown';
/** git answers in milliseconds; this only bounds a stuck file system. */
const GIT_TIMEOUT_MS = 2_000;

/** The nearest directory above `directory` with a package.json. */
function packageRootAbove(directory: string): string {
  for (let current = directory; ; current = dirname(current)) {
    if (existsSync(join(current, 'package.json'))) return current;
    if (dirname(current) === current) throw new Error(`no package.json above ${directory}`);
  }
}

/**
 * The service's package: the repository, whether this runs from src/ (tests) or from
 * dist/src/ (a build); /app in the image.
 */
const PACKAGE_ROOT = packageRootAbove(dirname(fileURLToPath(import.meta.url)));

/**
 * The version of the package at `root`, and its revision: `PLANT_STORE_REVISION` when set,
 * else the commit checked out when `root` is a git work tree of its own, else `unknown`.
 */
export function readBuildInfo(env: NodeJS.ProcessEnv, root: string): BuildInfo {
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    version: string;
  };
  return { version, revision: env[REVISION_VARIABLE]?.trim() || checkedOutCommit(root) };
}

/**
 * HEAD's hash when `root` is the top of a git work tree; `unknown` when it is not (a copy
 * without .git, or a directory inside another project's repository) or git is missing.
 */
function checkedOutCommit(root: string): string {
  try {
    const [topLevel, head] = execFileSync('git', ['rev-parse', '--show-toplevel', 'HEAD'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: GIT_TIMEOUT_MS,
    })
      .trim()
      .split('\n');
    return topLevel === realpathSync(root) ? head : UNKNOWN_REVISION;
  } catch {
    return UNKNOWN_REVISION;
  }
}

let current: BuildInfo | undefined;

/** This process's build, read once: a later checkout does not change what it runs. */
export function buildInfo(): BuildInfo {
  current ??= readBuildInfo(process.env, PACKAGE_ROOT);
  return current;
}
