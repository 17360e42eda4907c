// Child processes for benchmarks: a broker, workers that report one JSON
// line, and the compiled `parkbench` (as users run it, no tsx). Keeping them
// apart means each process's memory is its own.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { assertBuilt, binPath } from '../../testkit/built-cli.js';

export interface Child {
  readonly process: ChildProcess;
  /** The first stdout line matching `pattern`. */
  line(pattern: RegExp, timeoutMs?: number): Promise<string>;
  stop(): Promise<void>;
}

/** A TypeScript script of ours (a broker, a worker), run through tsx. */
export function startTsx(script: URL, args: readonly string[] = [], env: NodeJS.ProcessEnv = {}): Child {
  return startNode(['--import', 'tsx', '--expose-gc', fileURLToPath(script), ...args], fileURLToPath(script), env);
}

/** `parkbench ARGS`: the compiled command line (`npm run build` first; it throws, saying so, on a stale build). */
export function startCli(args: readonly string[], env: NodeJS.ProcessEnv = {}): Child {
  assertBuilt();
  return startNode(['--expose-gc', binPath, ...args], `parkbench ${args[0] ?? ''}`, env);
}

function startNode(argv: readonly string[], name: string, env: NodeJS.ProcessEnv): Child {
  const child = spawn(process.execPath, argv, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  const listeners: ((line: string) => void)[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line);
    for (const listener of listeners) listener(line);
  });
  return {
    process: child,
    line: (pattern, timeoutMs = 600_000) =>
      new Promise((resolve, reject) => {
        const seen = lines.find((line) => pattern.test(line));
        if (seen !== undefined) {
          resolve(seen);
          return;
        }
        const timer = setTimeout(
          () => reject(new Error(`no line matching ${String(pattern)} within ${timeoutMs} ms`)),
          timeoutMs,
        );
        listeners.push((line) => {
          if (pattern.test(line)) {
            clearTimeout(timer);
            resolve(line);
          }
        });
        child.once('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`${name} exited with ${String(code)} before a line matching ${String(pattern)}`));
        });
      }),
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) {
          resolve();
          return;
        }
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** The value at quantile `q` (0..1) of `values`, sorted ascending. */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
}

export function formatNumber(value: number, digits = 0): string {
  return value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}
