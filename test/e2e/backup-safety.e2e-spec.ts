import { spawn } from 'node:child_process';
import {
  chownSync,
  closeSync,
  lstatSync,
  openSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBackupCli, runMigrationCli } from '../support/built-service.js';
import { loginEnvironment } from '../support/login-environment.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { withTestSecretKeys } from '../support/webhook-secret-keys.js';

const BACKUP_CLI = fileURLToPath(new URL('../../dist/src/cli/backup.cli.js', import.meta.url));
/** The mode bits of a file, as `ls -l` shows them in octal. */
const modeOf = (file: string) => (statSync(file).mode & 0o777).toString(8);

/**
 * Where `npm run backup` writes, against whoever shares the directory: it creates its file
 * new (never through a link, never reusing what it finds), readable by its owner only.
 */
describe('npm run backup: the file it writes', () => {
  let workDir: string;
  let source: TestDatabase;
  let env: Record<string, string>;
  const backup = (file: string) => runBackupCli('backup', [file], env);

  beforeAll(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'plant-store-backup-file-'));
    source = await createTestDatabase();
    env = { DATABASE_URL: source.url };
    expect((await runMigrationCli(['run'], env)).code).toBe(0);
    await source.query(`INSERT INTO plants (id, name) VALUES (1, 'Monstera')`);
  }, 60_000);
  afterAll(async () => {
    await source?.drop();
    await rm(workDir, { recursive: true, force: true });
  });

  it('is created with mode 0600, replacing a leftover FILE.partial of its own that was 0644', async () => {
    const file = join(workDir, 'leftover.backup.gz');
    writeFileSync(`${file}.partial`, 'an earlier backup, stopped', { mode: 0o644 });
    const { code, stderr } = await backup(file);
    expect(code, stderr).toBe(0);
    expect(modeOf(file)).toBe('600');
    expect(lstatSync(`${file}.partial`, { throwIfNoEntry: false })).toBeUndefined();
  });

  it('refuses, in one line, a FILE.partial that is a symbolic link, and writes nothing through it', async () => {
    const file = join(workDir, 'linked.backup.gz');
    const victim = join(workDir, 'victim.txt');
    writeFileSync(victim, 'not a backup', { mode: 0o644 });
    symlinkSync(victim, `${file}.partial`);
    const { code, stderr } = await backup(file);
    expect(code).toBe(1);
    expect(stderr).toBe(
      `backup: ${file}.partial is left over and is a symbolic link: it is not replaced; remove it, or back up to another FILE\n`,
    );
    expect(readFileSync(victim, 'utf8')).toBe('not a backup');
    expect(modeOf(victim)).toBe('644');
    expect(lstatSync(`${file}.partial`).isSymbolicLink()).toBe(true);
    expect(lstatSync(file, { throwIfNoEntry: false })).toBeUndefined();
  });

  it.runIf(process.getuid?.() === 0)(
    "refuses a FILE.partial of another user's, and leaves it",
    async () => {
      const file = join(workDir, 'theirs.backup.gz');
      writeFileSync(`${file}.partial`, 'theirs', { mode: 0o600 });
      chownSync(`${file}.partial`, 65534, 65534);
      const { code, stderr } = await backup(file);
      expect(code).toBe(1);
      expect(stderr).toBe(
        `backup: ${file}.partial is left over and is a file of another user (uid 65534): it is not replaced; remove it, or back up to another FILE\n`,
      );
      expect(readFileSync(`${file}.partial`, 'utf8')).toBe('theirs');
    },
  );

  it('replaces a symbolic link at FILE with the backup, never writing to where it led', async () => {
    const file = join(workDir, 'link-at-file.backup.gz');
    const victim = join(workDir, 'victim-of-file.txt');
    writeFileSync(victim, 'not a backup', { mode: 0o644 });
    symlinkSync(victim, file);
    const { code, stderr } = await backup(file);
    expect(code, stderr).toBe(0);
    expect(lstatSync(file).isFile()).toBe(true);
    expect(modeOf(file)).toBe('600');
    expect(readFileSync(victim, 'utf8')).toBe('not a backup');
  });

  it('into standard output redirected to a file others may read: a warning to set umask 077', async () => {
    const file = join(workDir, 'stdout.backup.gz');
    const output = openSync(file, 'w', 0o644);
    const stderr = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [BACKUP_CLI, 'backup', '-'], {
        env: { ...loginEnvironment(), ...withTestSecretKeys(env) },
        stdio: ['ignore', output, 'pipe'],
      });
      let text = '';
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      child.on('error', reject).on('close', () => resolve(text));
    });
    closeSync(output);
    expect(stderr).toMatch(
      /^backup: warning: standard output is a file that others may read \(mode 644\): it will hold token hashes and webhook secrets; set umask 077 before redirecting a backup, or chmod 600 it\nbacked up .* to standard output in [\d.]+ s\n$/,
    );
    expect(statSync(file).size).toBeGreaterThan(0);
  });
});
