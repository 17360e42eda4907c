// `parkbench start` as a child process for tests that share one bench across
// a file (the browser tests): the API, its embedded broker and the demo's
// simulated boxes, on a temporary data folder and free ports, plus an
// operator token made by `parkbench admin operator add` on its database.
// Unlike cli-process.ts `startCli`, it is not tied to one test's teardown:
// the file stops it in `test.after.always`.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { ReadyInfo } from '../../whole-bench/index.js';
import { freePort } from '../../lib/free-port.js';
import { builtBin, runCli, type CliResult } from './run-cli.js';

export interface BenchProcess {
  ready: ReadyInfo;
  apiUrl: string;
  dataDir: string;
  databasePath: string;
  /** An operator's bearer token for /api/operator/... and the page. */
  token: string;
  stderr: string[];
  /** `parkbench admin ...` on the bench's database. */
  admin(...args: string[]): Promise<CliResult>;
  stop(): Promise<void>;
}

export interface BenchProcessOptions {
  readonly env?: NodeJS.ProcessEnv;
  /** A data folder of the caller's, kept at stop: a second start on it is a restart on the same database. */
  readonly dataDir?: string;
  /** The API's port (a restart keeps the page's address); a free one when not given. */
  readonly port?: number;
  /** The operator token of an earlier start on the same dataDir: no operator is added. */
  readonly token?: string;
}

export async function startBenchProcess(options: BenchProcessOptions = {}): Promise<BenchProcess> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'pb-page-')));
  const databasePath = join(dataDir, 'parkbench.sqlite');
  const port = options.port ?? (await freePort());
  const mqttPort = await freePort();
  const child = spawn(
    process.execPath,
    [builtBin(), 'start', '--data-dir', dataDir, '--port', String(port), '--mqtt-port', String(mqttPort)],
    { env: { ...process.env, LOG_LEVEL: 'warn', ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const stderr: string[] = [];
  createInterface({ input: child.stderr }).on('line', (line) => stderr.push(line));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  const stop = async (): Promise<void> => {
    process.off('exit', killOnExit);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    }
    if (options.dataDir === undefined) await rm(dataDir, { recursive: true, force: true });
  };
  try {
    const ready = await new Promise<ReadyInfo>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`parkbench start was not ready in 60 s:\n${stderr.slice(-20).join('\n')}`)),
        60_000,
      );
      createInterface({ input: child.stdout }).on('line', (line) => {
        if (!line.startsWith('parkbench ready ')) return;
        clearTimeout(timer);
        resolve(JSON.parse(line.slice('parkbench ready '.length)) as ReadyInfo);
      });
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`parkbench start exited:\n${stderr.slice(-20).join('\n')}`));
      });
    });
    const env = { DATABASE_PATH: databasePath, MQTT_URL: '' };
    const admin = (...args: string[]) => runCli(['admin', ...args], { env });
    const token = options.token ?? (await addOperator(admin));
    return { ready, apiUrl: ready.api_url, dataDir, databasePath, token, stderr, admin, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The operator `page-test`, added by `parkbench admin operator add`: its token. */
async function addOperator(admin: BenchProcess['admin']): Promise<string> {
  const added = await admin('operator', 'add', '--name', 'page-test', '--json');
  if (added.code !== 0) throw new Error(`admin operator add failed: ${added.stderr}`);
  return (JSON.parse(added.stdout) as { token: string }).token;
}
