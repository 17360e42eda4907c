// Where a command writes a file it makes when no path is given: the `data`
// folder, which the repository ignores (.gitignore) and where the bench
// keeps its own database and state (`parkbench start --data-dir`), so keys
// and provisioning files never land in a working tree. An explicit path is
// written where it says.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

export const DEFAULT_OUTPUT_DIR = 'data';

/** `data/<name>`, relative to the working directory; the folder is made when missing. */
export function defaultOutput(name: string): string {
  mkdirSync(DEFAULT_OUTPUT_DIR, { recursive: true });
  return join(DEFAULT_OUTPUT_DIR, name);
}
