import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { previousRelease, type PreviousRelease } from '../../scripts/previous-release.mjs';
import { loginEnvironment } from './login-environment.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Bounds on each step: an install fetches from the registry on a shared machine. */
const INSTALL_LIMIT_MS = 300_000;
const BUILD_LIMIT_MS = 180_000;

export interface PreviousReleaseBuild extends PreviousRelease {
  /** Its tree, built: `dist/` as `npm run build` makes it. */
  dir: string;
  /** How long the install and the build took together. */
  buildMs: number;
  /** Removes the tree. */
  remove(): Promise<void>;
}

/**
 * The previous release (scripts/previous-release.mjs) built from git into a temporary
 * directory, from nothing: `git archive` of its commit, its own dependencies (this tree's
 * node_modules when its lock file is this tree's, otherwise `npm ci`), `npm run build`.
 * Nothing is kept for the next run.
 */
/**
 * The machine's network settings (proxies, extra certificate authorities): the install
 * may ask the registry for what npm's cache lacks, through whatever this machine needs.
 */
function networkEnvironment(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] =>
        /^(https?_proxy|no_proxy|NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR)$/i.test(
          entry[0],
        ) && entry[1] !== undefined,
    ),
  );
}

export async function buildPreviousRelease(): Promise<PreviousReleaseBuild> {
  const release = previousRelease();
  const dir = await mkdtemp(join(tmpdir(), 'plant-store-previous-release-'));
  const remove = () => rm(dir, { recursive: true, force: true });
  const run = (command: string, args: string[], cwd: string, timeout: number) =>
    promisify(execFile)(command, args, {
      cwd,
      env: { ...loginEnvironment(), ...networkEnvironment() },
      timeout,
      maxBuffer: 64 * 1024 * 1024,
    });
  const startedAt = performance.now();
  try {
    await run(
      'bash',
      ['-o', 'pipefail', '-c', 'git archive "$1" | tar -x -C "$2"', 'archive', release.commit, dir],
      ROOT,
      BUILD_LIMIT_MS,
    );
    const [lock, ownLock] = await Promise.all(
      [dir, ROOT].map((tree) => readFile(join(tree, 'package-lock.json'), 'utf8')),
    );
    if (lock === ownLock) {
      await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    } else {
      // Without its optional dependencies (the embedded PostgreSQL and the Node.js binary,
      // half of the install: it runs on a PostgreSQL server, with this tree's Node.js) and
      // its install scripts (its `prepare` would build, which comes next). Packages npm's
      // cache holds are taken from it without asking the registry again: the lock file
      // pins each one's integrity.
      await run(
        'npm',
        [
          'ci',
          '--omit=optional',
          '--ignore-scripts',
          '--prefer-offline',
          '--no-audit',
          '--no-fund',
        ],
        dir,
        INSTALL_LIMIT_MS,
      );
    }
    await run('npm', ['run', '--silent', 'build'], dir, BUILD_LIMIT_MS);
  } catch (error) {
    await remove();
    throw error;
  }
  return { ...release, dir, buildMs: performance.now() - startedAt, remove };
}
