// The release before this tree, which `npm run test:upgrade` upgrades from and rolls back
// to. Run it to see which one that is: `node scripts/previous-release.mjs`.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RELEASE_TAG = /^v\d+\.\d+\.\d+$/;

/**
 * @typedef {object} PreviousRelease
 * @property {string} ref the git ref chosen
 * @property {string} commit the commit it names
 * @property {string} reason why it was chosen
 */

/** @param {string[]} args */
function git(args) {
  return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
}

/**
 * In this order: `PREVIOUS_RELEASE` (any git ref); else the newest `vX.Y.Z` tag in HEAD's
 * history on a commit other than HEAD (between releases, the one deployed; on a release's
 * own commit, the one before it); else, until a second release is tagged, the commit
 * before the one that added the newest migration.
 * @param {Record<string, string | undefined>} env
 * @returns {PreviousRelease}
 */
export function previousRelease(env = process.env) {
  const commitOf = (/** @type {string} */ ref) => git(['rev-parse', '--verify', `${ref}^{commit}`]);
  if (env.PREVIOUS_RELEASE) {
    const ref = env.PREVIOUS_RELEASE;
    return { ref, commit: commitOf(ref), reason: 'PREVIOUS_RELEASE' };
  }
  const head = commitOf('HEAD');
  const tag = git(['tag', '--list', 'v*', '--merged', 'HEAD', '--sort=-v:refname'])
    .split('\n')
    .find((name) => RELEASE_TAG.test(name) && commitOf(name) !== head);
  if (tag) {
    return { ref: tag, commit: commitOf(tag), reason: 'the newest release tag before HEAD' };
  }
  const newestMigration = git([
    'log',
    '--diff-filter=A',
    '-1',
    '--format=%H',
    '--',
    'migrations/*.ts',
  ]);
  if (!newestMigration) throw new Error('no release tag, and no migration in the git history');
  const ref = `${newestMigration}^`;
  return {
    ref,
    commit: commitOf(ref),
    reason: 'no release tag before HEAD: the commit before the newest migration was added',
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { ref, commit, reason } = previousRelease();
  console.log(`${ref} (${commit}): ${reason}`);
}
