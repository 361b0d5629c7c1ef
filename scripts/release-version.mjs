// `npm version <major|minor|patch>` runs this (package.json's "version" script) after it
// writes the new version to package.json and package-lock.json, and before it commits and
// tags vX.Y.Z: the other places that name the release follow, and CHANGELOG.md's
// Unreleased changes become the new version's (docs/operations/upgrading.md#releases).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * `text` with the one match of `pattern` replaced; throws when it matches none or several,
 * so that a file reshaped since fails the release instead of keeping the old version.
 * @param {string} text
 * @param {RegExp} pattern
 * @param {string} replacement
 */
function replaceOnce(text, pattern, replacement) {
  const matches = text.match(new RegExp(pattern.source, `${pattern.flags}g`)) ?? [];
  if (matches.length !== 1) throw new Error(`${pattern} matches ${matches.length} times, not once`);
  return text.replace(pattern, replacement);
}

/**
 * The changelog with a `## [version] - date` heading under `## [Unreleased]`, which keeps
 * nothing: what was unreleased is that version's. A release with nothing to say is refused.
 * @param {string} text
 * @param {string} version
 * @param {string} date
 */
export function releasedChangelog(text, version, date) {
  if (text.includes(`## [${version}]`)) throw new Error(`CHANGELOG.md already has ${version}`);
  const unreleased = /^## \[Unreleased\]\n([\s\S]*?)(?=^## \[|(?![\s\S]))/m.exec(text);
  if (!unreleased) throw new Error('CHANGELOG.md has no "## [Unreleased]" section');
  if (unreleased[1].trim() === '')
    throw new Error('CHANGELOG.md has nothing under Unreleased to release');
  return text.replace('## [Unreleased]\n', `## [Unreleased]\n\n## [${version}] - ${date}\n`);
}

/**
 * Each file besides package.json that names the release, and its edit for a new version.
 * @type {Record<string, (text: string, version: string, date: string) => string>}
 */
export const RELEASE_EDITS = {
  'CHANGELOG.md': releasedChangelog,
  // The image's org.opencontainers.image.version label.
  Dockerfile: (text, version) => replaceOnce(text, /^ARG VERSION=.*$/m, `ARG VERSION=${version}`),
  // The image tag the Deployment and the migration Job run.
  'deploy/kubernetes/kustomization.yaml': (text, version) =>
    replaceOnce(text, /^(\s*newTag: ).*$/m, `$1"${version}"`),
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const date = new Date().toISOString().slice(0, 10);
  for (const [path, edit] of Object.entries(RELEASE_EDITS)) {
    const file = join(ROOT, path);
    writeFileSync(file, edit(readFileSync(file, 'utf8'), version, date));
  }
  // npm commits package.json and package-lock.json; the rest must be staged to go with them.
  execFileSync('git', ['add', '--', ...Object.keys(RELEASE_EDITS)], { cwd: ROOT });
  console.log(`release ${version}: ${Object.keys(RELEASE_EDITS).join(', ')} updated`);
}
