import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RELEASE_EDITS, releasedChangelog } from '../../scripts/release-version.mjs';
import { PACKAGE_VERSION } from '../support/release.js';

const CHANGELOG = `# Changelog

## [Unreleased]

### Fixed

- A bug.

## [1.0.0] - 2026-11-27

### Added

- Everything.
`;

describe('npm version: the release in every place that names it', () => {
  it('is what package.json runs on `npm version`', () => {
    const { scripts } = JSON.parse(readFileSync('package.json', 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(scripts.version).toBe('node scripts/release-version.mjs');
  });

  it("makes the Unreleased changes the new version's, under an empty Unreleased", () => {
    expect(releasedChangelog(CHANGELOG, '1.1.0', '2026-12-01')).toBe(
      CHANGELOG.replace('## [Unreleased]\n', '## [Unreleased]\n\n## [1.1.0] - 2026-12-01\n'),
    );
  });

  it('refuses a release with nothing unreleased, or one the changelog already has', () => {
    const released = releasedChangelog(CHANGELOG, '1.1.0', '2026-12-01');
    expect(() => releasedChangelog(released, '1.1.1', '2026-12-02')).toThrow(/nothing under/);
    expect(() => releasedChangelog(CHANGELOG, '1.0.0', '2026-12-02')).toThrow(/already has/);
    expect(() => releasedChangelog('# Changelog\n', '1.1.0', '2026-12-02')).toThrow(/no "##/);
  });

  it("finds package.json's version once in the image's and the Kubernetes files, and changes only it", () => {
    for (const path of ['Dockerfile', 'deploy/kubernetes/kustomization.yaml']) {
      const text = readFileSync(path, 'utf8');
      const edit = RELEASE_EDITS[path];
      expect(edit(text, PACKAGE_VERSION, '2026-12-01')).toBe(text);
      const changed = edit(text, '2.0.0', '2026-12-01')
        .split('\n')
        .filter((line, index) => line !== text.split('\n')[index]);
      expect(changed).toHaveLength(1);
      expect(changed[0]).toContain('2.0.0');
    }
  });

  it('fails rather than release with a file it cannot find the version in', () => {
    expect(() => RELEASE_EDITS.Dockerfile('FROM node:24\n', '2.0.0', '2026-12-01')).toThrow(
      /matches 0 times/,
    );
  });
});
