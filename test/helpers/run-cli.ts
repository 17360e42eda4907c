// Runs the real `parkbench` entry point (bin/parkbench.js, which runs the
// compiled command line in dist/) as a child process. `npm test` builds dist/
// first; a file run alone (`npx ava ...`) after an edit of the sources fails
// with the line saying to run `npm run build` rather than test the last build.
import { execFile } from 'node:child_process';
import { assertBuilt, binPath } from '../../testkit/built-cli.js';

let checked = false;

/** bin/parkbench.js, once dist/ is known to be built from the sources as they are (checked once per test file). */
export function builtBin(): string {
  if (!checked) {
    assertBuilt();
    checked = true;
  }
  return binPath;
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runCli(
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string; nodeArgs?: readonly string[] } = {},
): Promise<CliResult> {
  const bin = builtBin();
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [...(options.nodeArgs ?? []), bin, ...args],
      { env: { ...process.env, ...options.env }, cwd: options.cwd, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
    else child.stdin?.end();
  });
}
