// `--ready-file PATH`: a file that exists exactly while a long-running
// command is ready, for scripts that start it in the background and wait
// (`until [ -e PATH ]`). Claimed at start (a file a killed run left behind
// is removed, so it never says ready for this run), written atomically once
// ready (a reader sees all of it or nothing), removed when the command stops.
import { rm } from 'node:fs/promises';
import { checkReplaceable, UnsafeTargetError, writeFileAtomic } from '../lib/atomic-file.js';
import { UsageError } from './errors.js';

export class ReadyFile {
  private constructor(readonly path: string) {}

  /** Refuses (UsageError) a path that is no regular file or new name; removes a stale file. */
  static async claim(path: string): Promise<ReadyFile> {
    if (path.trim() === '') throw new UsageError('--ready-file wants a path');
    try {
      checkReplaceable(path);
    } catch (error) {
      if (error instanceof UnsafeTargetError) throw new UsageError(`--ready-file: ${error.message}`);
      throw error;
    }
    await rm(path, { force: true });
    return new ReadyFile(path);
  }

  /** One JSON line, written atomically. */
  async write(content: Record<string, unknown>): Promise<void> {
    await writeFileAtomic(this.path, `${JSON.stringify(content)}\n`, { mode: 0o644 });
  }

  async remove(): Promise<void> {
    await rm(this.path, { force: true });
  }
}
