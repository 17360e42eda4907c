// The compiled `parkbench` (bin/parkbench.js runs dist/cli/main.js), which the
// tests, the benchmarks and the developer scripts start as a child process,
// and whether dist/ is older than the sources it is built from. `npm run
// build` (scripts/build.ts) writes BUILD_STAMP last; a file the build reads
// (TypeScript, the page's HTML and CSS, the tsconfig files) changed or added
// after it makes the build stale. A README is no input; a source removed
// leaves only an output nothing imports (the build removes it).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The executable of `package.json`'s `bin`: run it with `process.execPath`. */
export const binPath = join(root, 'bin', 'parkbench.js');

/** Written by `npm run build` once everything in dist/ is written. */
export const BUILD_STAMP = join(root, 'dist', '.build-stamp');

/** The folders tsc compiles into dist/ (tsconfig.build.json's `include`). */
export function compiledFolders(): string[] {
  const build = JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8')) as { include: string[] };
  return build.include;
}

/** What dist/ is built from: the compiled folders, the bench page's sources,
 * and the TypeScript configurations. */
export function buildSources(): string[] {
  return [
    ...compiledFolders().map((folder) => join(root, folder)),
    join(root, 'web', 'bench', 'src'),
    join(root, 'web', 'bench', 'index.html'),
    join(root, 'tsconfig.json'),
    join(root, 'tsconfig.build.json'),
  ];
}

/** What the build reads, by file name. */
const BUILD_INPUT = /\.(?:ts|tsx|css|html|json)$/;

/** The newest modification time (ms) of a build input at `path` or under it (0 if none). */
function newestUnder(path: string): number {
  const stats = statSync(path);
  if (!stats.isDirectory()) return BUILD_INPUT.test(path) ? stats.mtimeMs : 0;
  let newest = 0;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestUnder(join(path, entry)));
  return newest;
}

/** Why dist/ cannot stand for the sources (not built, or older than a source), or undefined when it can. */
export function staleBuild(): string | undefined {
  if (!existsSync(BUILD_STAMP)) return 'dist/ is not built';
  const built = statSync(BUILD_STAMP).mtimeMs;
  for (const source of buildSources()) {
    if (existsSync(source) && newestUnder(source) > built) return `dist/ is older than ${source.slice(root.length)}`;
  }
  return undefined;
}

/** Throws, saying what to run, unless dist/ is built from the sources as they are. */
export function assertBuilt(): void {
  const stale = staleBuild();
  if (stale !== undefined)
    throw new Error(`${stale}: run \`npm run build\` (npm test runs it) before starting the compiled parkbench`);
}
