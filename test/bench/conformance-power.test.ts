// `parkbench conformance --bench` against `parkbench sim` on a pty pair
// (socat): the power-cycle case runs where the bench file gives the box a
// switch that works here, and is skipped, saying why, where it does not.
// Here the `command` switch freezes and thaws the simulator process
// (SIGSTOP, SIGCONT): the box keeps what it holds, goes silent and comes
// back, which is what the restart path must handle; a box that stays silent
// fails the case naming the limit.
import avaTest, { type ExecutionContext } from 'ava';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CANNOT_RESTART } from '../../conformance/cases/power-cycle-case.js';
import { NO_TERMINAL } from '../../lib/power/prompt-driver.js';
import { simOnPty } from '../helpers/conformance-serial-sim.js';
import { reportRows, type JsonReport } from '../helpers/conformance-fixtures.js';
import { runCli } from '../helpers/run-cli.js';
import { testNeeding } from '../helpers/requires.js';

const test = testNeeding('socat', avaTest);

const POWER_CYCLE = 'issuer keys, revocations, tries and the control sequence survive a power cycle';

/** Box `moduleId` simulated on a pty, and a bench file naming it with `power` (a YAML flow map, or none). */
async function benchWithSim(
  t: ExecutionContext,
  moduleId: number,
  power: (simPid: number) => string | undefined,
): Promise<{ path: string; simPid: number }> {
  const { box, pair, sim } = await simOnPty(t, moduleId);
  const simPid = sim.child.pid ?? 0;
  // A frozen simulator is thawed first, so its own teardown can stop it.
  t.teardown(() => {
    try {
      process.kill(simPid, 'SIGCONT');
    } catch {
      // gone
    }
  });
  const entry = power(simPid);
  const path = join(box.directory, 'bench.yaml');
  await writeFile(
    path,
    `boxes:
  - module_id: ${moduleId}
    provisioning: ${box.path}
    link: { serial: ${pair.b} }
${entry === undefined ? '' : `    power: ${entry}\n`}`,
  );
  return { path, simPid };
}

async function conformance(
  path: string,
  ...extra: string[]
): Promise<{ code: number; report: JsonReport; stderr: string }> {
  const result = await runCli(['conformance', '--bench', path, '--cycle-ms', '5000', '--json', ...extra]);
  return { code: result.code, report: JSON.parse(result.stdout) as JsonReport, stderr: result.stderr };
}

test('no power entry: every case passes, the power cycle is skipped as the command line cannot restart a box', async (t) => {
  const { path } = await benchWithSim(t, 4611, () => undefined);
  const { code, report, stderr } = await conformance(path);
  t.is(code, 0, stderr);
  t.like(
    report.results.find((entry) => entry.name === POWER_CYCLE),
    { result: 'skip', reason: CANNOT_RESTART },
  );
  t.is(report.summary.skipped, 1);
});

test('the prompt driver without a terminal: the power cycle is skipped, saying why', async (t) => {
  const { path } = await benchWithSim(t, 4612, () => '{ driver: prompt }');
  const { code, report, stderr } = await conformance(path);
  t.is(code, 0, stderr);
  t.like(
    report.results.find((entry) => entry.name === POWER_CYCLE),
    { result: 'skip', reason: NO_TERMINAL },
  );
});

test('a switch that takes the box away and brings it back: the power cycle runs and passes, every case passes', async (t) => {
  const { path } = await benchWithSim(
    t,
    4613,
    (pid) => `{ driver: command, off: "kill -STOP ${pid}", on: "kill -CONT ${pid}", off_ms: 300, settle_ms: 200 }`,
  );
  const { code, report, stderr } = await conformance(path);
  t.is(code, 0, stderr + JSON.stringify(report.results.filter((entry) => entry.result !== 'pass')));
  t.like(
    report.results.find((entry) => entry.name === POWER_CYCLE),
    { result: 'pass', got: '0x00, 0x00, restart, 0x00, 0x16, 0x00, 0x15' },
  );
  t.is(report.summary.total, reportRows({ parkingKey: Buffer.alloc(16) }));
  t.is(report.summary.skipped, 0);
});

test('a box that does not answer after power on fails the power cycle, naming the limit', async (t) => {
  const { path } = await benchWithSim(
    t,
    4614,
    (pid) => `{ driver: command, off: "kill -STOP ${pid}", on: "true", off_ms: 100, settle_ms: 100 }`,
  );
  const { code, report } = await conformance(path, '--wait-ms', '1500', '--answer-ms', '500', '--skip-wearing');
  t.is(code, 1);
  const powerCycle = report.results.find((entry) => entry.name === POWER_CYCLE);
  t.is(powerCycle?.result, 'fail');
  t.regex(
    powerCycle?.reason ?? '',
    /the case stopped: the box did not answer within 1500 ms \(--wait-ms\) after power on and settle_ms 100 ms/,
  );
});

test('a switch that fails: the power cycle fails with its one line', async (t) => {
  const { path } = await benchWithSim(
    t,
    4615,
    () => '{ driver: command, off: "echo relay jammed >&2; exit 4", on: "true" }',
  );
  const { code, report } = await conformance(path);
  t.is(code, 1);
  const powerCycle = report.results.find((entry) => entry.name === POWER_CYCLE);
  t.like(powerCycle, {
    result: 'fail',
    reason: 'the case stopped: `echo relay jammed >&2; exit 4` exit code 4: relay jammed',
  });
  // The link was opened again: the cases after it ran on the box.
  t.deepEqual(
    report.results.filter((entry) => entry.result === 'fail').map((entry) => entry.name),
    [POWER_CYCLE],
  );
});
