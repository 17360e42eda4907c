// `npm run build` (and `prepare`, so `npm install` in a clone runs it): the
// package as it runs, in dist/. tsc compiles the folders of
// tsconfig.build.json (JavaScript, declarations, source maps; incremental, so
// a build with nothing changed takes seconds), the outputs of a source that
// is gone are removed, the bench page is bundled into dist/web/bench
// (build-page.ts), and the stamp testkit/built-cli.ts compares the sources
// with is written last. The stamp of the build before stays meanwhile: a
// source changed since is newer than it either way, and a process checking
// the build while this one runs (nothing changed) still finds it.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILD_STAMP, compiledFolders } from '../testkit/built-cli.js';
import { buildPage } from './build-page.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

/** The suffixes tsc writes for one `.ts` source. */
const OUTPUTS = ['.js', '.js.map', '.d.ts'];

/** Removes what tsc wrote for a source that no longer exists (a file renamed
 * or removed): tsc never deletes, and the package must not ship it. */
function removeOrphans(folder: string): string[] {
  const removed: string[] = [];
  if (!existsSync(folder)) return removed;
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const output = join(folder, entry.name);
    if (entry.isDirectory()) {
      removed.push(...removeOrphans(output));
      continue;
    }
    const suffix = OUTPUTS.find((candidate) => entry.name.endsWith(candidate));
    if (suffix === undefined) continue;
    const source = join(root, relative(dist, folder), `${entry.name.slice(0, -suffix.length)}.ts`);
    if (existsSync(source)) continue;
    rmSync(output);
    removed.push(relative(root, output));
  }
  return removed;
}

execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
const removed = compiledFolders().flatMap((folder) => removeOrphans(join(dist, folder)));
if (removed.length > 0)
  process.stdout.write(`removed ${removed.length} outputs of sources gone: ${removed.join(', ')}\n`);
const page = await buildPage();
writeFileSync(BUILD_STAMP, `${new Date().toISOString()}\n`);
process.stdout.write(`built dist/: the package, and the bench page (assets/${page.script}, assets/${page.style})\n`);
