import { fstatSync } from 'node:fs';
import { type FileHandle, lstat, rename, unlink } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { openNewPrivateFile } from '../../common/files/new-private-file.js';
import { syncDirectoryOf } from '../../common/files/sync-directory.js';
import { BackupRefusedError } from './backup-refused.error.js';
import { STANDARD_STREAM } from './backup-file.js';

/**
 * Where a backup is written: `FILE.partial`, created new with mode 0600, then synced and
 * renamed to FILE once complete, so that a file named FILE is whole (the rename replaces
 * whatever FILE was, a symbolic link included, without following it). Or standard output,
 * for `-`.
 */
export class BackupDestination {
  private constructor(
    readonly file: string,
    private readonly draft?: { path: string; handle: FileHandle; stream: Writable },
  ) {}

  /**
   * Writes everything `source` gives. Into standard output by `pipe`, which never ends it
   * (pipeline would): done once `source` has handed it everything (a pipe or a file is
   * written synchronously on Linux).
   */
  receive(source: Readable): Promise<void> {
    if (this.draft) return pipeline(source, this.draft.stream);
    process.stdout.once('error', (error) => source.destroy(error));
    source.pipe(process.stdout);
    return finished(source);
  }

  /**
   * Opens FILE.partial for writing. A `.partial` left by an earlier backup that stopped is
   * replaced only if it is a regular file of this user's; anything else there (a symbolic
   * link, another user's file) is refused in one line, and left as it is.
   */
  static async open(file: string, warn: (line: string) => void): Promise<BackupDestination> {
    if (file === STANDARD_STREAM) {
      warnIfStandardOutputIsShared(warn);
      return new BackupDestination(file);
    }
    const path = `${file}.partial`;
    await removeOwnLeftover(path);
    const handle = await openNewPrivateFile(path).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      throw new BackupRefusedError(
        `${path} appeared while the backup was starting: is another backup writing to ${file}?`,
      );
    });
    // Synced to disk as it is closed, before the rename names it FILE.
    const stream = handle.createWriteStream({ flush: true });
    return new BackupDestination(file, { path, handle, stream });
  }

  /**
   * Once everything is received: the data on disk, then the name FILE, on disk too; the
   * file's size.
   */
  async commit(): Promise<number | undefined> {
    if (!this.draft) return undefined;
    const { path } = this.draft;
    const { size } = await lstat(path);
    await rename(path, this.file);
    await syncDirectoryOf(this.file);
    return size;
  }

  /** After a failure: the draft, which this backup created, goes. */
  async discard(): Promise<void> {
    if (!this.draft) return;
    this.draft.stream.destroy();
    await this.draft.handle.close().catch(() => undefined);
    await unlink(this.draft.path).catch(() => undefined);
  }
}

async function removeOwnLeftover(path: string): Promise<void> {
  const found = await lstat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (!found) return;
  const what = found.isSymbolicLink()
    ? 'a symbolic link'
    : !found.isFile()
      ? 'not a regular file'
      : found.uid !== process.getuid?.()
        ? `a file of another user (uid ${found.uid})`
        : undefined;
  if (what) {
    throw new BackupRefusedError(
      `${path} is left over and is ${what}: it is not replaced; remove it, or back up to another FILE`,
    );
  }
  await unlink(path);
}

/**
 * `backup -- - > FILE` creates FILE with the shell's umask (often 0644): a warning when
 * standard output is a file others may read (docs: `umask 077` first).
 */
function warnIfStandardOutputIsShared(warn: (line: string) => void): void {
  const output = fstatSync(process.stdout.fd);
  if (output.isFile() && (output.mode & 0o077) !== 0) {
    warn(
      `standard output is a file that others may read (mode ${(output.mode & 0o777).toString(8)}): it will hold token hashes and webhook secrets; set umask 077 before redirecting a backup, or chmod 600 it`,
    );
  }
}
