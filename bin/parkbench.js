#!/usr/bin/env node
// Entry point of the `parkbench` command: the compiled command line,
// dist/cli/main.js, which `npm run build` writes (an installed package comes
// built; `npm install` in a clone builds it).
import process from 'node:process';
import { URL } from 'node:url';

try {
  await import('../dist/cli/main.js');
} catch (error) {
  // The compiled command line itself missing; any other module missing is another error.
  const main = new URL('../dist/cli/main.js', import.meta.url).href;
  if (!(error instanceof Error && 'url' in error && error.url === main)) throw error;
  process.stderr.write('parkbench: not built (dist/cli/main.js is missing): run `npm run build`\n');
  process.exitCode = 1;
}
