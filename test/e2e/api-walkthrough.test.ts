// docs/api.md's walk-through with curl, run as the script it is: its shell
// blocks between the "walk-through" markers, in one bash with `set -euo
// pipefail`, against a real `parkbench start` (temporary data folder, free
// ports) after the app stand-in played its session, as a newcomer following
// the README does. Only API, MQTT_PORT, HOOK_PORT and DATABASE_PATH are set
// for it: the variables the document itself reads from the environment.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test, { type ExecutionContext } from 'ava';
import type { ReadyInfo } from '../../whole-bench/index.js';
import { appSessionArgs } from '../../lib/app-session-args.js';
import { freePort } from '../../lib/free-port.js';
import { startCli } from '../helpers/cli-process.js';
import { markedScript } from '../helpers/markdown-script.js';
import { testNeeding } from '../helpers/requires.js';
import { runCli } from '../helpers/run-cli.js';

const repository = fileURLToPath(new URL('../../', import.meta.url));
const SCRIPT_TIMEOUT_MS = 240_000;

interface ScriptResult {
  code: number | string;
  stdout: string;
  stderr: string;
}

/** Runs `script` in bash from the repository's folder (where `npx parkbench`
 * finds the command), its process group killed at the end whatever happened
 * (the receiver it starts in the background included). */
function runBash(t: ExecutionContext, script: string, env: NodeJS.ProcessEnv): Promise<ScriptResult> {
  const child = spawn('bash', ['-c', `set -euo pipefail\n${script}`], {
    cwd: repository,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const killGroup = (): void => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // the group is gone already
    }
  };
  t.teardown(killGroup);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve) => {
    const timer = setTimeout(killGroup, SCRIPT_TIMEOUT_MS);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? signal ?? 'unknown', stdout, stderr });
    });
  });
}

testNeeding(['curl', 'jq', 'mosquitto_sub'], test)(
  "docs/api.md's walk-through runs as a script against parkbench start, after the app stand-in",
  async (t) => {
    t.timeout(SCRIPT_TIMEOUT_MS + 120_000);
    const document = await readFile(join(repository, 'docs', 'api.md'), 'utf8');
    const script = markedScript(document, 'walk-through');

    const dataDir = await mkdtemp(join(tmpdir(), 'pb-walk-'));
    t.teardown(() => rm(dataDir, { recursive: true, force: true }));
    const port = await freePort();
    const mqttPort = await freePort();
    const bench = startCli(
      t,
      ['start', '--data-dir', dataDir, '--port', String(port), '--mqtt-port', String(mqttPort)],
      { LOG_LEVEL: 'warn' },
    );
    const line = await bench.waitForLine(/^parkbench ready /, 60_000);
    const ready = JSON.parse(line.slice('parkbench ready '.length)) as ReadyInfo;
    // The README's first step: the app stand-in plays session 1 with smart key 1.
    const app = await runCli(appSessionArgs(ready));
    t.is(app.code, 0, `${app.stdout}\n${app.stderr}`);

    const result = await runBash(t, script, {
      API: ready.api_url,
      MQTT_PORT: String(mqttPort),
      HOOK_PORT: String(await freePort()),
      DATABASE_PATH: join(dataDir, 'parkbench.sqlite'),
      MQTT_URL: '',
    });
    const output = `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`;
    t.is(result.code, 0, output);

    // /health as the document shows it: the migrations of this version.
    const shown = /^# \{"status":"ok","migrations":(\d+),/m.exec(document)?.[1];
    const live = /^\{"status":"ok","migrations":(\d+),/m.exec(result.stdout)?.[1];
    t.truthy(live, output);
    t.is(shown, live, 'the migrations count docs/api.md shows is the one /health answers');
    // The session and key after the app stand-in's: 2, read from the 201.
    t.regex(result.stdout, /"parking_session":\{"id":2,"type":"pay_per_use","state":"entering"/, output);
    t.regex(result.stdout, /id="payment-state">paid</, output);
    // The API stored the box's MQTT answer first: both uploads are duplicates of that log.
    const uploads = result.stdout.match(/^\{"box_logs":\[\{"id":\d+,"verified":true,"duplicate":true\}\]\}$/gm);
    t.is(uploads?.length, 2, output);
    t.is(uploads?.[0], uploads?.[1], 'the same log both times');
    t.regex(result.stdout, /^active$/m, output);
    t.regex(result.stdout, /^receiver: \S+ \[\{.*"verified":true\}\]$/m, output);
    t.regex(result.stdout, /"pending":0,"delivered":1,"dead":0/, output);
    t.regex(result.stdout, /^\{"url":"[^"]+","expose":false\}$/m, output);
    t.regex(result.stdout, /"state":"finished"/, output);
    t.regex(result.stdout, /^box \d+: REVOKE done \(OK\)$/m, output);
    t.regex(result.stdout, /"error":"smart_key_revoked"/, output);

    t.is(await bench.stop('SIGTERM'), 0);
  },
);
