// One command of a power switch, run as labgrid's ExternalPowerDriver runs
// its: through /bin/sh (a bench's commands are shell lines), with a time
// limit after which the whole process group is killed. A non-zero exit, a
// signal or the time limit is a PowerError of one line: the command, what
// happened, and the last line it wrote on stderr.
import { spawn } from 'node:child_process';
import { PowerError } from './power-driver.js';

export interface CommandOutput {
  readonly stdout: string;
  readonly stderr: string;
}

/** Keep at most this much of each stream (a chatty tool must not grow memory). */
const KEEP_BYTES = 64 * 1024;

/** Runs `line` with `/bin/sh -c`; resolves with its output when it exits 0
 * within `timeoutMs`, rejects with a PowerError otherwise. `env` replaces
 * the environment when given (tests put a stand-in first on PATH). */
export function runCommand(line: string, timeoutMs: number, env?: NodeJS.ProcessEnv): Promise<CommandOutput> {
  return new Promise((resolve, reject) => {
    // detached: its own process group, so a time-out kills the shell and what it started.
    const child = spawn('/bin/sh', ['-c', line], {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      ...(env === undefined ? {} : { env }),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout = (stdout + chunk).slice(-KEEP_BYTES);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-KEEP_BYTES);
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new PowerError(`\`${line}\`: ${error.message}`));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (!timedOut && code === 0) {
        resolve({ stdout, stderr });
        return;
      }
      const what = timedOut
        ? `did not finish within ${timeoutMs} ms (timeout_ms), killed`
        : code === null
          ? `killed by ${signal ?? 'a signal'}`
          : `exit code ${code}`;
      const last = lastLine(stderr);
      reject(new PowerError(`\`${line}\` ${what}${last === '' ? '' : `: ${last}`}`));
    });
  });
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Gone already.
  }
}

/** The last non-blank line of a stream, for the one-line error. */
export function lastLine(text: string): string {
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
  return lines.at(-1) ?? '';
}
