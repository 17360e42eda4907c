// Crash-safe file replacement: a reader (or a box restarting after power
// loss) sees the old content or the new one, never a torn mix. Only a
// regular file or a new name is ever replaced: what stands at the path is
// judged as itself, never through a symbolic link (O_NOFOLLOW's rule), so a
// path naming a link, a directory, a device, a FIFO or a socket is refused
// (renaming over /dev/full as root would replace the device with a file).
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, lstatSync, openSync, renameSync, unlinkSync, type Stats } from 'node:fs';
import { lstat, open, rename } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** A path that names something other than a regular file. */
export class UnsafeTargetError extends Error {
  override readonly name = 'UnsafeTargetError';
  constructor(
    readonly path: string,
    what: string,
  ) {
    super(`${path} is ${what}: refused, only a regular file or a new name is written`);
  }
}

function kindOf(stats: Stats): string | undefined {
  if (stats.isFile()) return undefined;
  if (stats.isSymbolicLink()) return 'a symbolic link';
  if (stats.isDirectory()) return 'a directory';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isSocket()) return 'a socket';
  return 'not a regular file';
}

function refuseKind(path: string, stats: Stats): void {
  const kind = kindOf(stats);
  if (kind !== undefined) throw new UnsafeTargetError(path, kind);
}

const isMissing = (error: unknown): boolean => (error as NodeJS.ErrnoException).code === 'ENOENT';

/** Throws UnsafeTargetError unless `path` is a regular file (not a link to
 * one) or names nothing yet. Writers of files call it before any work, so a
 * refused path changes nothing; the writers below check again right before
 * they rename. */
export function checkReplaceable(path: string): void {
  let stats: Stats;
  try {
    stats = lstatSync(path);
  } catch (error) {
    if (isMissing(error)) return;
    throw error;
  }
  refuseKind(path, stats);
}

async function checkReplaceableAsync(path: string): Promise<void> {
  let stats: Stats;
  try {
    stats = await lstat(path);
  } catch (error) {
    if (isMissing(error)) return;
    throw error;
  }
  refuseKind(path, stats);
}

/** A file written and flushed beside its path, not yet in place. Putting
 * it in place checks the path again, renames the file over it (atomic within
 * a file system) and flushes the directory so the rename itself is durable. */
export interface PreparedFile {
  commit(): Promise<void>;
  /** The same, synchronous: a caller can do it inside a database transaction. */
  commitSync(): void;
  /** Removes the temporary file (after a failure; harmless after a commit). */
  discard(): void;
}

/** Writes `data` to a temporary file beside `path` (mode 0600 unless
 * `mode`) and flushes it to disk; `commit` puts it in place. */
export async function prepareFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: { mode?: number } = {},
): Promise<PreparedFile> {
  await checkReplaceableAsync(path);
  const directory = dirname(path);
  const temporary = join(directory, `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const discard = (): void => {
    try {
      unlinkSync(temporary);
    } catch {
      // Never made, or already renamed.
    }
  };
  try {
    const file = await open(temporary, 'wx', options.mode ?? 0o600);
    try {
      await file.writeFile(data);
      await file.sync();
    } finally {
      await file.close();
    }
  } catch (error) {
    discard();
    throw error;
  }
  return {
    commit: async () => {
      await checkReplaceableAsync(path);
      await rename(temporary, path);
      await syncDirectory(directory);
    },
    commitSync: () => {
      checkReplaceable(path);
      renameSync(temporary, path);
      syncDirectorySync(directory);
    },
    discard,
  };
}

/**
 * Writes `data` to a temporary file beside `path`, flushes it to disk, then
 * renames it over `path` and flushes the directory. Rejects with
 * UnsafeTargetError, nothing written, when `path` is not a regular file or a
 * new name.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: { mode?: number } = {},
): Promise<void> {
  const prepared = await prepareFileAtomic(path, data, options);
  try {
    await prepared.commit();
  } catch (error) {
    prepared.discard();
    throw error;
  }
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

function syncDirectorySync(directory: string): void {
  const fd = openSync(directory, 'r');
  try {
    fsyncSync(fd);
  } catch {
    // As above.
  } finally {
    closeSync(fd);
  }
}
