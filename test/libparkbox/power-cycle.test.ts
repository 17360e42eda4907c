// The power-cycle case of `parkbench conformance --bench` against libparkbox,
// through a bench power driver: the bench file gives the box a `command`
// switch whose `on` starts parkbox-host in the background on its end of a
// socat pty pair, with its state file, and whose `off` kills it with SIGKILL
// (a power loss: no clean shutdown, nothing flushed on the way out). The
// suite cuts the power, switches it on again, and checks what the box kept:
// every case passes, the power cycle with them, for a box of a sealed and
// one of a signed parking.
//
// The switch writes parkbox-host's pid to a file; the test's teardown kills
// that pid, so no parkbox-host outlives the test whatever the suite did.
//
// Needs socat, cmake, a C compiler and mbed TLS's headers (libmbedtls-dev),
// through testNeeding: without one, a skip naming the package; under CI, a
// failure.
import avaTest, { type ExecutionContext } from 'ava';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCommand } from '../../lib/power/run-command.js';
import { boxFile, keysOf, reportRows, type JsonReport } from '../helpers/conformance-fixtures.js';
import { buildParkboxHost, PARKBOX_HOST } from '../helpers/parkbox-host.js';
import { ptyPairForTest } from '../helpers/pty-pair.js';
import { testNeeding } from '../helpers/requires.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait.js';

const test = testNeeding(['socat', 'cmake', 'cc', 'mbedtls'], avaTest.serial);

const POWER_CYCLE = 'issuer keys, revocations, tries and the control sequence survive a power cycle';
const STARTED = /^parkbox-host: box \d+ .* box_seq (\d+)$/gm;

/** The pid the switch last wrote, or undefined before its first `on`. */
async function pidIn(path: string): Promise<number | undefined> {
  try {
    const pid = Number.parseInt(await readFile(path, 'utf8'), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Kills the process the pid file names, if it still runs. */
async function killByPidFile(path: string): Promise<void> {
  const pid = await pidIn(path);
  if (pid === undefined) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone: the suite's last switch was `on`, or `off` got it
  }
}

/** The box_seq of each start-up line parkbox-host wrote in its log (appended to at each `on`). */
async function startsIn(log: string): Promise<number[]> {
  const text = await readFile(log, 'utf8').catch(() => '');
  return [...text.matchAll(STARTED)].map((match) => Number(match[1]));
}

/** A box of `kind` played by parkbox-host behind a `command` power switch, and its bench file. */
async function switchedBox(
  t: ExecutionContext,
  moduleId: number,
  kind: 'sealed' | 'signed',
): Promise<{ bench: string; log: string; pidFile: string; on: string }> {
  const box = await boxFile(t, moduleId, keysOf(kind));
  const pair = await ptyPairForTest(t);
  const state = join(box.directory, 'box.state');
  const log = join(box.directory, 'parkbox-host.log');
  const pidFile = join(box.directory, 'parkbox-host.pid');
  // setsid: the box runs in a session of its own, out of the switch's shell,
  // as a board runs on its own once powered.
  const on = `setsid ${PARKBOX_HOST} --box ${box.path} --serial ${pair.a} --state ${state} --barrier-ms 200 >>${log} 2>&1 & echo $! > ${pidFile}`;
  const off = `kill -KILL $(cat ${pidFile})`;
  t.teardown(() => killByPidFile(pidFile));
  const bench = join(box.directory, 'bench.yaml');
  await writeFile(
    bench,
    `boxes:
  - module_id: ${moduleId}
    provisioning: ${box.path}
    link: { serial: ${pair.b} }
    power: { driver: command, on: ${JSON.stringify(on)}, off: ${JSON.stringify(off)}, off_ms: 300, settle_ms: 300 }
`,
  );
  return { bench, log, pidFile, on };
}

for (const [kind, moduleId] of [
  ['sealed', 5111],
  ['signed', 5112],
] as const) {
  test(`a box of a ${kind} parking, parkbox-host behind a command power switch (off: SIGKILL): every case passes, the power cycle too`, async (t) => {
    t.timeout(180_000);
    await buildParkboxHost();
    const { bench, log, pidFile, on } = await switchedBox(t, moduleId, kind);
    // The box is powered before the run, as on a bench; the suite switches it off and on in its power-cycle case.
    await runCommand(on, 10_000);
    await waitFor(async () => (await startsIn(log)).length === 1, 'parkbox-host on the link', 10_000);
    const first = await pidIn(pidFile);

    const result = await runCli([
      'conformance',
      ...['--bench', bench, '--box', String(moduleId)],
      ...['--cycle-ms', '5000', '--json'],
    ]);
    const report = JSON.parse(result.stdout) as JsonReport;
    t.deepEqual(
      report.results.filter((entry) => entry.result !== 'pass'),
      [],
    );
    t.is(result.code, 0, result.stderr);
    t.is(report.summary.skipped, 0);
    t.is(report.summary.total, reportRows({ parkingKey: kind === 'sealed' ? Buffer.alloc(16) : null }));
    t.regex(report.results.find((entry) => entry.name === POWER_CYCLE)?.got ?? '', /restart/);

    // The switch really cut the power: a second process, started on the state
    // the first left, which had answered (box_seq above 0).
    const starts = await startsIn(log);
    t.is(starts.length, 2, await readFile(log, 'utf8'));
    t.is(starts[0], 0);
    t.true((starts[1] ?? 0) > 0, `box_seq ${String(starts[1])} after the power cut`);
    t.not(await pidIn(pidFile), first);
  });
}
