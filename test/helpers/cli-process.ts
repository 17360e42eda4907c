// A long-running `parkbench` command (api, sim, gateway, start) as a child
// process: read its output line by line, wait for a line, stop it with a
// signal and get its exit code.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { ExecutionContext } from 'ava';
import { builtBin } from './run-cli.js';

export interface CliProcess {
  readonly child: ChildProcess;
  readonly stdout: string[];
  readonly stderr: string[];
  /** Resolves with the first stdout line matching `pattern` (already seen or to come). */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Sends `signal` and resolves with the exit code (or the signal's name). */
  stop(signal?: NodeJS.Signals): Promise<number | string>;
  readonly exited: Promise<number | string>;
}

export function startCli(t: ExecutionContext, args: readonly string[], env: NodeJS.ProcessEnv = {}): CliProcess {
  const child = spawn(process.execPath, [builtBin(), ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    stdout.push(line);
    for (const waiter of [...waiters]) {
      if (waiter.pattern.test(line)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  createInterface({ input: child.stderr }).on('line', (line) => stderr.push(line));
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  // If the test worker itself goes (an ava timeout), its children go with it.
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  void exited.then(() => process.off('exit', killOnExit));
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  return {
    child,
    stdout,
    stderr,
    exited,
    waitForLine: (pattern, timeoutMs = 20_000) => {
      const seen = stdout.find((line) => pattern.test(line));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(
                `no line matching ${String(pattern)} within ${timeoutMs} ms; stderr:\n${stderr.slice(-20).join('\n')}`,
              ),
            ),
          timeoutMs,
        );
        const waiter = {
          pattern,
          resolve: (line: string) => {
            clearTimeout(timer);
            resolve(line);
          },
        };
        waiters.push(waiter);
        void exited.then((code) => {
          if (waiters.includes(waiter)) {
            clearTimeout(timer);
            reject(
              new Error(
                `exited (${code}) before a line matching ${String(pattern)}; stderr:\n${stderr.slice(-20).join('\n')}`,
              ),
            );
          }
        });
      });
    },
    stop: (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
