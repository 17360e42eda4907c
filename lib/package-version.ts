// parkbench's version, from its package.json, found from a module of the
// package whether that module runs from the sources (`testing/index.ts`) or
// from the build (`dist/testing/index.js`), one folder deeper.
import { readFileSync } from 'node:fs';

/** The version in the package.json of parkbench one or two folders above
 * `moduleUrl` (a module's `import.meta.url`); 'unknown' when there is none. */
export function packageVersionNear(moduleUrl: string): string {
  for (const relative of ['../package.json', '../../package.json']) {
    try {
      const manifest = JSON.parse(readFileSync(new URL(relative, moduleUrl), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (manifest.name === 'parkbench' && manifest.version !== undefined) return manifest.version;
    } catch {
      // not at this level: try the next one up
    }
  }
  return 'unknown';
}
