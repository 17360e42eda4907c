// `parkbench soak --bench` through the real command line against `parkbench
// sim` on a pty pair (socat) whose power the bench file's `command` switch
// cuts and gives back through the simulator's --power-file: the box's
// limits come from the bench file unless --limit or --limits are given, and
// --power-cycle-every power-cycles the box through that switch. A limit the
// file gets wrong, and --power-cycle-every without a switch, are one line
// and exit 2.
import avaTest from 'ava';
import { readFile } from 'node:fs/promises';
import { boxFile } from '../helpers/conformance-fixtures.js';
import { poweredSim } from '../helpers/powered-sim.js';
import { runCli } from '../helpers/run-cli.js';
import { testNeeding } from '../helpers/requires.js';

const test = testNeeding('socat', avaTest);

/** The simulator's barrier with timings of 0, and battery enough for every opening. */
const INSTANT = ['--opening-ms', '0', '--open-hold-ms', '0', '--closing-ms', '0', '--battery-mv', '12000'];

interface Result {
  summary: { cycles: number; failures: number; passed: boolean; power_cycles: number };
  verdicts: { limit: string; passed: boolean }[];
  power_cycles: { before_cycle: number; ms: number; failure?: string }[];
}

const BENCH_LIMITS = ['    limits:', "      - 'answer_ms.p99<=1000'", '      - cycle_ms.max<=3000'];

test("the bench file's limits, and a power cycle through its switch every N cycles: the box comes back each time", async (t) => {
  const { bench, powerFile } = await poweredSim(t, 5301, { simFlags: INSTANT, benchLines: BENCH_LIMITS });
  const result = await runCli([
    'soak',
    '--bench',
    bench,
    '--cycles',
    '11',
    '--power-cycle-every',
    '5',
    '--cycle-ms',
    '2000',
    '--json',
  ]);
  t.is(result.code, 0, result.stderr);
  const json = JSON.parse(result.stdout) as Result;
  t.like(json.summary, { cycles: 11, failures: 0, passed: true, power_cycles: 2 });
  t.deepEqual(
    json.power_cycles.map((each) => [each.before_cycle, each.failure]),
    [
      [6, undefined],
      [11, undefined],
    ],
    'before the 6th and the 11th cycle, each back in time',
  );
  t.deepEqual(
    json.verdicts.map((each) => each.limit),
    ['failures==0', 'answer_ms.p99<=1000', 'cycle_ms.max<=3000'],
  );
  t.is((await readFile(powerFile, 'utf8')).trim(), 'on', 'the box left powered');
});

test("--limit given with --bench: the flags' limits, not the file's", async (t) => {
  const { bench } = await poweredSim(t, 5302, { simFlags: INSTANT, benchLines: BENCH_LIMITS });
  const result = await runCli(['soak', '--bench', bench, '--cycles', '3', '--limit', 'answer_ms.max<=900', '--json']);
  t.is(result.code, 0, result.stderr);
  t.deepEqual(
    (JSON.parse(result.stdout) as Result).verdicts.map((each) => each.limit),
    ['failures==0', 'answer_ms.max<=900'],
  );
});

test('a bad limit in the bench file names its place; --power-cycle-every without a switch, or out of range: one line, exit 2', async (t) => {
  const { bench } = await poweredSim(t, 5303, { benchLines: ['    limits: [answer_ms.p99<=250, nope]'] });
  const badLimit = await runCli(['soak', '--bench', bench, '--cycles', '3']);
  t.is(badLimit.code, 2);
  t.regex(badLimit.stderr, /^parkbench: .*bench\.yaml:3: boxes\[0\]\.limits\[1\]: limit "nope"/m);
  t.is(badLimit.stderr.trim().split('\n').length, 1, badLimit.stderr);

  const box = await boxFile(t, 5304);
  const noSwitch = await runCli([
    'soak',
    '--box',
    box.path,
    '--serial',
    '/dev/null',
    '--cycles',
    '3',
    '--power-cycle-every',
    '2',
  ]);
  t.is(noSwitch.code, 2);
  t.regex(noSwitch.stderr, /--power-cycle-every needs a power switch: the box's power: entry in a bench file/);

  const zero = await runCli(['soak', '--bench', bench, '--cycles', '3', '--power-cycle-every', '0']);
  t.is(zero.code, 2);
  t.regex(zero.stderr, /--power-cycle-every must be an integer from 1 to/);
});
