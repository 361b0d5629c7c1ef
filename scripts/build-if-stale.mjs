// `npm start` runs this before the service: it compiles only when a source is newer than
// the build, so that a start after `npm ci` (whose prepare script builds) or after another
// start begins at once. The tests build the same way (test/support/built-service.ts).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * @typedef {object} Build
 * @property {string} output a file the build writes, relative to the project's root
 * @property {string[]} [alsoWrites] other files it writes, each missing or older meaning
 *   the build is too
 * @property {string[]} sources the files and folders it is made from
 * @property {string[]} npmArgs the npm command that makes it
 */

/** @type {Build} The service, `dist/src/main.js`. */
export const SERVICE_BUILD = {
  output: 'dist/src/main.js',
  // The backup command's bundle, which `nest build` alone (npm run start:dev) deletes.
  alsoWrites: ['dist/cli/backup.js'],
  sources: [
    'src',
    'migrations',
    'scripts/bundle-cli.mjs',
    'tsconfig.json',
    'nest-cli.json',
    'package-lock.json',
  ],
  npmArgs: ['run', '--silent', 'build'],
};

/** @param {string} path */
function newestChange(path) {
  const stats = statSync(path);
  if (!stats.isDirectory()) return stats.mtimeMs;
  return Math.max(
    stats.mtimeMs,
    ...readdirSync(path).map((entry) => newestChange(join(path, entry))),
  );
}

/**
 * Whether one of the build's outputs is missing or older than one of its sources.
 * @param {Build} build
 */
export function isStale({ output, alsoWrites = [], sources }) {
  const built = Math.min(
    ...[output, ...alsoWrites].map((file) => {
      const path = join(ROOT, file);
      return existsSync(path) ? statSync(path).mtimeMs : 0;
    }),
  );
  return sources.some((source) => newestChange(join(ROOT, source)) >= built);
}

if (process.argv[1] === fileURLToPath(import.meta.url) && isStale(SERVICE_BUILD)) {
  console.error(
    'Compiling the service: dist/ lacks a file or is older than a source (npm run build).',
  );
  execFileSync('npm', SERVICE_BUILD.npmArgs, { cwd: ROOT, stdio: 'inherit' });
}
