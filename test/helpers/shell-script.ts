// A bash script run as a user runs it, in a folder of its own where
// `npx parkbench` and `./node_modules/.bin/parkbench` are this repository's
// bin (a symbolic link, as `npm install` makes for a project that installs
// parkbench). The script runs in a process group of its own: whatever it
// left behind is killed when the test ends.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { builtBin } from './run-cli.js';

export interface ScriptResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The script's process group: empty once nothing it started runs (processGone(-group)). */
  readonly group: number;
}

export interface ScriptFolder {
  readonly path: string;
  remove(): Promise<void>;
}

/** A temporary folder with node_modules/.bin/parkbench; the caller removes it. */
export async function folderWithParkbench(): Promise<ScriptFolder> {
  const path = await mkdtemp(join(tmpdir(), 'pb-script-'));
  await mkdir(join(path, 'node_modules', '.bin'), { recursive: true });
  await symlink(builtBin(), join(path, 'node_modules', '.bin', 'parkbench'));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

export function runScript(t: ExecutionContext, directory: string, script: string): Promise<ScriptResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, npm_config_update_notifier: 'false' };
  // The script names its own database.
  delete env.DATABASE_URL;
  delete env.DATABASE_PATH;
  const child = spawn('bash', ['-c', script], {
    cwd: directory,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const group = child.pid ?? 0;
  t.teardown(() => {
    try {
      process.kill(-group, 'SIGKILL');
    } catch {
      // The group has ended.
    }
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // 'exit', not 'close': a process the script left running would hold its pipes open.
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr, group })));
}

/** Resolves once no process has `pid` (a negative pid: no process is in
 * that group), polled every 100 ms; rejects after `timeoutMs`. */
export async function processGone(pid: number, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    if (Date.now() > deadline) throw new Error(`process ${pid} still runs after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
