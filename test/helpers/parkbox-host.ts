// libparkbox's parkbox-host (libparkbox/README.md) for the tests that run it
// as a box: built once per test process with the repository's CMake build
// into libparkbox/build (git-ignored; an up-to-date build costs a second),
// one process at a time (ava runs test files in parallel processes, and two
// builds of one tree at once break each other's files), and started on one end of a pty pair with its own state file.
//
// Declare the tests that use it with
// `testNeeding(['socat', 'cmake', 'cc', 'mbedtls'], test)` (requires.ts).
import type { ExecutionContext } from 'ava';
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const source = join(root, 'libparkbox');
const build = join(source, 'build');

/** The built program's path. */
export const PARKBOX_HOST = join(build, 'parkbox-host');

let built: Promise<void> | undefined;

/** Held (flock(1), util-linux) while a process configures and builds; one
 * lock per build folder, outside the tree. */
const buildLock = join(
  tmpdir(),
  `parkbench-libparkbox-${createHash('sha256').update(build).digest('hex').slice(0, 12)}.lock`,
);

/** Configures (once) and builds parkbox-host with the repository's CMake build. */
export function buildParkboxHost(): Promise<void> {
  built ??= (async () => {
    await run('flock', [buildLock, 'cmake', '-S', source, '-B', build], { cwd: root, timeout: 120_000 });
    await run('flock', [buildLock, 'cmake', '--build', build, '--target', 'parkbox-host'], {
      cwd: root,
      timeout: 170_000,
    });
  })();
  return built;
}

export interface HostProcess {
  /** Sends `signal` and resolves with the exit code (or the signal's name). */
  stop(signal: NodeJS.Signals): Promise<number | string>;
}

/** Starts parkbox-host for the provisioning file `box` on `serial`, its state
 * in `state`; resolves once it is on the link, and stops it when the test ends. */
export async function startParkboxHost(
  t: ExecutionContext,
  box: string,
  serial: string,
  state: string,
): Promise<HostProcess> {
  const child = spawn(PARKBOX_HOST, ['--box', box, '--serial', serial, '--state', state, '--barrier-ms', '200'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const stderr: string[] = [];
  const exited = new Promise<number | string>((done) =>
    child.once('exit', (code, signal) => done(code ?? signal ?? 'unknown')),
  );
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  void exited.then(() => process.off('exit', killOnExit));
  const stop = async (signal: NodeJS.Signals): Promise<number | string> => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return exited;
  };
  t.teardown(async () => {
    t.log(`parkbox-host exited ${String(await stop('SIGTERM'))}; stderr:\n${stderr.join('\n')}`);
  });
  // Its first line says it is on the link (after its start-up status report).
  await new Promise<void>((ready, fail) => {
    const timer = setTimeout(() => fail(new Error(`parkbox-host did not start: ${stderr.join('\n')}`)), 10_000);
    createInterface({ input: child.stderr }).on('line', (line) => {
      stderr.push(line);
      if (line.startsWith('parkbox-host: box ')) {
        clearTimeout(timer);
        ready();
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      fail(new Error(`parkbox-host exited ${String(code)}: ${stderr.join('\n')}`));
    });
  });
  return { stop };
}
