import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Syncs the directory that holds `path` to disk: a file's own sync keeps its data, and
 * only this keeps its name (created or renamed there) through a crash.
 */
export async function syncDirectoryOf(path: string): Promise<void> {
  const directory = await open(dirname(path), constants.O_RDONLY);
  try {
    await directory.sync();
  } finally {
    await directory.close();
  }
}
