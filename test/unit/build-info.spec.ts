import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildInfo, readBuildInfo } from '../../src/config/build-info.js';
import { PACKAGE_VERSION } from '../support/release.js';

const scratch = mkdtempSync(join(tmpdir(), 'build-info-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A directory under the scratch one with a package.json of `version`. */
function packageAt(path: string, version: string): string {
  const root = join(scratch, path);
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'plant-store', version }));
  return root;
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();

/** `root` made a git repository with one commit; its hash. */
function committed(root: string): string {
  git(root, 'init', '--quiet');
  git(root, 'add', '.');
  git(root, 'commit', '--quiet', '-m', 'release');
  return git(root, 'rev-parse', 'HEAD');
}

describe('build info', () => {
  it("reads the version from the package's package.json", () => {
    const root = packageAt('plain', '2.3.4');
    expect(readBuildInfo({}, root).version).toBe('2.3.4');
  });

  it('takes the revision from the commit checked out', () => {
    const root = packageAt('clone', '1.0.0');
    const head = committed(root);
    expect(head).toMatch(/^[0-9a-f]{40}$/);
    expect(readBuildInfo({}, root).revision).toBe(head);
  });

  it('says unknown without a repository of its own: a copy, or a folder of another project', () => {
    expect(readBuildInfo({}, packageAt('copy', '1.0.0')).revision).toBe('unknown');
    const outer = packageAt('outer', '9.9.9');
    const vendored = packageAt('outer/vendored', '1.0.0');
    committed(outer);
    expect(readBuildInfo({}, vendored).revision).toBe('unknown');
  });

  it('says unknown when git cannot be run', () => {
    const root = packageAt('no-git', '1.0.0');
    committed(root);
    const path = process.env.PATH;
    try {
      process.env.PATH = '';
      expect(readBuildInfo({}, root).revision).toBe('unknown');
    } finally {
      process.env.PATH = path;
    }
  });

  it('prefers PLANT_STORE_REVISION, as the image sets it, and ignores it blank', () => {
    const root = packageAt('image', '1.0.0');
    const head = committed(root);
    expect(readBuildInfo({ PLANT_STORE_REVISION: ' abc1234 ' }, root).revision).toBe('abc1234');
    expect(readBuildInfo({ PLANT_STORE_REVISION: ' ' }, root).revision).toBe(head);
  });

  it("is this repository's version for the running service", () => {
    expect(buildInfo().version).toBe(PACKAGE_VERSION);
    expect(buildInfo()).toBe(buildInfo());
  });
});
