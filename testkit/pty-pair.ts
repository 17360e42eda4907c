// A pty pair made by socat: two device paths joined like the two ends of a
// USB serial cable, the bench's stand-in for a real box's cable (docs/bench.md
// makes the same pair by hand). The serial benchmark and the tests use it;
// declare such tests with `testNeeding('socat', test)` (test/helpers/requires.ts)
// and take the pair through test/helpers/pty-pair.ts `ptyPairForTest`.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface PtyPair {
  /** One end (e.g. the box's). */
  readonly a: string;
  /** The other end (e.g. the gateway's or the test's). */
  readonly b: string;
  /** Ends socat: both ends vanish, like an unplugged cable. */
  close(): Promise<void>;
}

export async function startPtyPair(directory?: string): Promise<PtyPair> {
  const folder = directory ?? (await mkdtemp(join(tmpdir(), 'pb-pty-')));
  const a = join(folder, 'ttyA');
  const b = join(folder, 'ttyB');
  const child = spawn('socat', ['-d', '-d', `pty,raw,echo=0,link=${a}`, `pty,raw,echo=0,link=${b}`], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let stderr = '';
    const timer = setTimeout(() => reject(new Error(`socat did not start: ${stderr}`)), 5_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`socat could not run (is it installed?): ${error.message}`));
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('starting data transfer loop')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  // If the test worker itself goes (an ava timeout), socat goes with it.
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  return {
    a,
    b,
    close: async () => {
      process.off('exit', killOnExit);
      await stopChild(child);
      if (directory === undefined) await rm(folder, { recursive: true, force: true });
    },
  };
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
