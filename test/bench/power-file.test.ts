// Done when: `parkbench conformance --bench` with a `command` power switch
// that writes the simulator's --power-file (`echo off > F`, `echo on > F`)
// runs the power-cycle case against `parkbench sim --serial` on a pty pair
// (socat), the box starting again from its state file; it passes, and a box
// started with --bug forget-tries fails it (and the echo check of the same
// answers), nothing else.
import avaTest from 'ava';
import { readFile } from 'node:fs/promises';
import { reportRows, type JsonReport } from '../helpers/conformance-fixtures.js';
import { poweredSim } from '../helpers/powered-sim.js';
import { runCli } from '../helpers/run-cli.js';
import { testNeeding } from '../helpers/requires.js';

const test = testNeeding('socat', avaTest);

const POWER_CYCLE = 'issuer keys, revocations, tries and the control sequence survive a power cycle';
const ECHOES = 'kind, key_id, module_id, direction, remaining echoed';

async function conformance(bench: string): Promise<{ code: number; report: JsonReport; stderr: string }> {
  const result = await runCli(['conformance', '--bench', bench, '--cycle-ms', '5000', '--json']);
  return { code: result.code, report: JSON.parse(result.stdout) as JsonReport, stderr: result.stderr };
}

test('a box that keeps its state across the power cycle passes it, and every other case', async (t) => {
  const { bench, powerFile } = await poweredSim(t, 4631);
  const { code, report, stderr } = await conformance(bench);
  t.is(code, 0, stderr + JSON.stringify(report.results.filter((entry) => entry.result !== 'pass')));
  t.like(
    report.results.find((entry) => entry.name === POWER_CYCLE),
    { result: 'pass', got: '0x00, 0x00, restart, 0x00, 0x16, 0x00, 0x15' },
  );
  t.is(report.summary.total, reportRows({ parkingKey: Buffer.alloc(16) }));
  t.is(report.summary.passed, report.summary.total);
  t.is((await readFile(powerFile, 'utf8')).trim(), 'on');
});

test('a box started with --bug forget-tries fails the power cycle (and the echo of the same answers), nothing else', async (t) => {
  const { bench } = await poweredSim(t, 4632, { simFlags: ['--bug', 'forget-tries'] });
  const { code, report } = await conformance(bench);
  t.is(code, 1);
  const failed = report.results.filter((entry) => entry.result === 'fail');
  t.deepEqual(
    failed.map((entry) => entry.name),
    [POWER_CYCLE, ECHOES],
  );
  t.regex(failed[0]?.reason ?? '', /remaining/);
});
