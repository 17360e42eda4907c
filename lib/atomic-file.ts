// Crash-safe file replacement: a reader (or a box restarting after power
// loss) sees the old content or the new one, never a torn mix.
import { randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Writes `data` to a temporary file beside `path`, flushes it to disk, then
 * renames it over `path` (rename is atomic within a file system) and flushes
 * the directory so the rename itself is durable.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: { mode?: number } = {},
): Promise<void> {
  const directory = dirname(path);
  const temporary = join(directory, `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const file = await open(temporary, 'wx', options.mode ?? 0o600);
    try {
      await file.writeFile(data);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
  await syncDirectory(directory);
}

async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, 'r');
  try {
    await handle.sync();
  } catch {
    // Some file systems refuse fsync on a directory; the rename is still atomic.
  } finally {
    await handle.close();
  }
}
