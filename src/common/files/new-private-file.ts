import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';

/** Holds secrets (a backup's token hashes, an archive's audit rows): its owner's alone. */
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Creates `path` new and opens it for writing, mode 0600 whatever the umask. O_EXCL:
 * never over an existing file, and never through a symbolic link at `path` either, wherever
 * it points (O_NOFOLLOW); the open then fails with EEXIST, which the caller words.
 */
export async function openNewPrivateFile(path: string): Promise<FileHandle> {
  const { O_CREAT, O_EXCL, O_NOFOLLOW, O_WRONLY } = constants;
  const handle = await open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, PRIVATE_FILE_MODE);
  // The umask may have narrowed the mode the file was created with; it is exactly 0600.
  await handle.chmod(PRIVATE_FILE_MODE);
  return handle;
}
