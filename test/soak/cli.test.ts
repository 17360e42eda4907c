// `parkbench soak` through the real command line against `parkbench sim` on
// a real pty pair (socat), barrier timings 0: a healthy box passes; each of
// the simulator's faults fails the limit it is meant to (the answer delayed,
// the battery drained, a jam every N openings); bad flags and expressions
// are one line and exit 2; SIGINT exits 130 with the report of what ran.
import avaTest, { type ExecutionContext } from 'ava';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { simOnPty } from '../helpers/conformance-serial-sim.js';
import { startCli } from '../helpers/cli-process.js';
import { runCli } from '../helpers/run-cli.js';
import { assertWellFormedXml } from '../helpers/conformance-fixtures.js';
import { testNeeding } from '../helpers/requires.js';

const test = testNeeding('socat', avaTest);

/** The simulator's barrier with timings of 0, and battery enough for every opening (1 mV a movement). */
const INSTANT = ['--opening-ms', '0', '--open-hold-ms', '0', '--closing-ms', '0', '--battery-mv', '12000'];

interface Result {
  summary: { cycles: number; failures: number; passed: boolean; access: string };
  verdicts: { limit: string; actual: number | null; passed: boolean }[];
  interrupted: boolean;
}

async function soak(t: ExecutionContext, moduleId: number, simFlags: readonly string[], soakFlags: readonly string[]) {
  const { box, pair } = await simOnPty(t, moduleId, [...INSTANT, ...simFlags]);
  const result = await runCli([
    'soak',
    '--box',
    box.path,
    '--serial',
    pair.b,
    '--cycle-ms',
    '2000',
    '--json',
    ...soakFlags,
  ]);
  return { box, result, json: result.stdout === '' ? undefined : (JSON.parse(result.stdout) as Result) };
}

function verdict(json: Result | undefined, limit: string): { actual: number | null; passed: boolean } | undefined {
  return json?.verdicts.find((each) => each.limit === limit);
}

// Limits a healthy simulated box meets on a loaded machine too: these tests
// check verdicts, not this machine's speed (perf:soak measures that).
const LIMITS = ['--limit', 'answer_ms.p99<=2000', '--limit', 'battery_mv.drop<=1000', '--limit', 'cycle_ms.max<=5000'];

test('a healthy box passes every limit: exit 0', async (t) => {
  const { result, json } = await soak(t, 5201, [], ['--cycles', '300', ...LIMITS]);
  t.is(result.code, 0, result.stderr);
  t.like(json?.summary, { cycles: 300, failures: 0, passed: true, access: 'sealed' });
  t.deepEqual(
    json?.verdicts.map((each) => [each.limit, each.passed]),
    [
      ['failures==0', true],
      ['answer_ms.p99<=2000', true],
      ['battery_mv.drop<=1000', true],
      ['cycle_ms.max<=5000', true],
    ],
  );
  // Not a terminal: quiet progress lines on stderr.
  t.regex(result.stderr, /^soak: 1\/300 cycles, /m);
});

test('--report DIR: every cycle in report.json, a testcase per limit in junit.xml, the page', async (t) => {
  const { box, pair } = await simOnPty(t, 5202, INSTANT);
  const dir = join(box.directory, 'report');
  const result = await runCli([
    'soak',
    '--box',
    box.path,
    '--serial',
    pair.b,
    '--cycles',
    '50',
    ...LIMITS,
    '--report',
    dir,
  ]);
  t.is(result.code, 0, result.stderr);
  t.regex(result.stdout, /^passed: 50 cycles, 0 failures, /m);
  const report = JSON.parse(await readFile(join(dir, 'report.json'), 'utf8')) as Result & {
    cycles: {
      cycle: number;
      status: number;
      answer_ms: number;
      open_ms: number;
      cycle_ms: number;
      battery_mv: number;
      drift_s: number;
    }[];
  };
  t.is(report.cycles.length, 50);
  t.like(report.cycles[49], { cycle: 50, status: 0 });
  for (const field of ['answer_ms', 'open_ms', 'cycle_ms', 'battery_mv', 'drift_s'] as const)
    t.is(typeof report.cycles[0]?.[field], 'number', field);
  const junit = await readFile(join(dir, 'junit.xml'), 'utf8');
  assertWellFormedXml(junit);
  t.is(junit.match(/<testcase /g)?.length, 4);
  t.regex(await readFile(join(dir, 'report.html'), 'utf8'), /<svg data-plot="answer" data-points="50"/);
});

test('--delay-ms 40 fails answer_ms.p99<=25, and only it: exit 1', async (t) => {
  const { result, json } = await soak(
    t,
    5203,
    ['--delay-ms', '40'],
    ['--cycles', '20', '--limit', 'answer_ms.p99<=25', '--limit', 'failures==0'],
  );
  t.is(result.code, 1, result.stderr);
  t.false(verdict(json, 'answer_ms.p99<=25')?.passed);
  t.true((verdict(json, 'answer_ms.p99<=25')?.actual ?? 0) >= 40);
  t.true(verdict(json, 'failures==0')?.passed);
});

test('--battery-drain-mv 100 fails battery_mv.drop<=1000, and only it: exit 1', async (t) => {
  const { result, json } = await soak(t, 5204, ['--battery-drain-mv', '100'], ['--cycles', '20', ...LIMITS]);
  t.is(result.code, 1, result.stderr);
  t.false(verdict(json, 'battery_mv.drop<=1000')?.passed);
  t.true((verdict(json, 'battery_mv.drop<=1000')?.actual ?? 0) >= 19 * 100);
  t.deepEqual(
    json?.verdicts.filter((each) => !each.passed).map((each) => each.limit),
    ['battery_mv.drop<=1000'],
  );
});

test('--jam-every 10 fails failures==0 with BARRIER_FAULT every 10th cycle; failures<=3 holds: exit 1', async (t) => {
  const { box, pair } = await simOnPty(t, 5205, [...INSTANT, '--jam-every', '10']);
  const dir = join(box.directory, 'report');
  const result = await runCli([
    'soak',
    '--box',
    box.path,
    '--serial',
    pair.b,
    '--cycles',
    '30',
    '--cycle-ms',
    '2000',
    '--report',
    dir,
  ]);
  t.is(result.code, 1, result.stderr);
  t.regex(result.stdout, /^FAIL {2}failures==0 {2}\(measured 3\)$/m);
  t.regex(result.stdout, /^ {2}cycle 10: status 0x30 BARRIER_FAULT$/m);
  const report = JSON.parse(await readFile(join(dir, 'report.json'), 'utf8')) as {
    failures: { cycle: number; status: number }[];
  };
  t.deepEqual(
    report.failures.map((each) => [each.cycle, each.status]),
    [
      [10, 0x30],
      [20, 0x30],
      [30, 0x30],
    ],
  );
  const html = await readFile(join(dir, 'report.html'), 'utf8');
  t.regex(html, /<tr><td>20<\/td><td>0x30 BARRIER_FAULT<\/td>/);
  const tolerant = await runCli([
    'soak',
    '--box',
    box.path,
    '--serial',
    pair.b,
    '--cycles',
    '30',
    '--limit',
    'failures<=3',
    '--json',
  ]);
  t.is(tolerant.code, 0, tolerant.stderr);
});

test('bad flags and expressions: one line, exit 2, before the link is opened', async (t) => {
  const cases: [readonly string[], RegExp][] = [
    [
      ['--cycles', '10', '--limit', 'answer_ms.p99=<250'],
      /^parkbench: limit "answer_ms\.p99=<250" is not measure\.statistic OP number/,
    ],
    [['--cycles', '10', '--limit', 'answer_ms<=250'], /needs a statistic/],
    [['--cycles', '10', '--limit', 'speed.max<=1'], /unknown measure "speed"/],
    [[], /^parkbench: give --cycles N or --duration D/],
    [['--duration', '8 hours'], /^parkbench: --duration: "8 hours" is no duration/],
    [['--cycles', '0'], /^parkbench: --cycles must be an integer from 1/],
    [['--cycles', '10', '--limits', '/nonexistent/limits.yaml'], /^parkbench: --limits: cannot read/],
    [['--cycles', '10', '--report', '/etc/hostname'], /^parkbench: --report \/etc\/hostname is not a folder/],
  ];
  for (const [flags, message] of cases) {
    const result = await runCli(['soak', '--box', '/nonexistent/box.json', '--serial', '/dev/null-pty', ...flags]);
    t.is(result.code, 2, `${flags.join(' ')}: ${result.stderr}`);
    t.regex(result.stderr, message, flags.join(' '));
    t.is(result.stderr.trim().split('\n').length, 1, result.stderr);
  }
  const noTarget = await runCli(['soak', '--cycles', '5']);
  t.is(noTarget.code, 2);
  t.regex(noTarget.stderr, /give exactly one target/);
});

test('a --limits file with a bad line: that line named, exit 2', async (t) => {
  const { box, pair } = await simOnPty(t, 5206, INSTANT);
  const file = join(box.directory, 'limits.yaml');
  await writeFile(file, "limits:\n  - answer_ms.p99<=250\n  - 'answer_ms.p101<=1'\n");
  const result = await runCli(['soak', '--box', box.path, '--serial', pair.b, '--cycles', '5', '--limits', file]);
  t.is(result.code, 2);
  t.regex(result.stderr, /limits\.yaml line 3: limit "answer_ms\.p101<=1": unknown statistic "p101"/);
  await writeFile(file, "# the bench's\n- 'answer_ms.p99<=2000'\n- failures==0\n");
  const good = await runCli([
    'soak',
    '--box',
    box.path,
    '--serial',
    pair.b,
    '--cycles',
    '5',
    '--limits',
    file,
    '--json',
  ]);
  t.is(good.code, 0, good.stderr);
  t.deepEqual(
    (JSON.parse(good.stdout) as Result).verdicts.map((each) => each.limit),
    ['answer_ms.p99<=2000', 'failures==0'],
  );
});

test('SIGINT: exit 130, the cycles that ran reported (--json and --report), interrupted true', async (t) => {
  const { box, pair } = await simOnPty(t, 5207, INSTANT);
  const dir = join(box.directory, 'report');
  const soakRun = startCli(t, [
    'soak',
    '--box',
    box.path,
    '--serial',
    pair.b,
    '--duration',
    '1h',
    '--json',
    '--report',
    dir,
  ]);
  const deadline = Date.now() + 20_000;
  while (!soakRun.stderr.some((line) => line.startsWith('soak: 1 cycles')) && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 50));
  await new Promise((resolve) => setTimeout(resolve, 300));
  const code = await soakRun.stop('SIGINT');
  t.is(code, 130, soakRun.stderr.join('\n'));
  const json = JSON.parse(soakRun.stdout.join('\n')) as Result;
  t.true(json.interrupted);
  t.true(json.summary.cycles > 0);
  const report = JSON.parse(await readFile(join(dir, 'report.json'), 'utf8')) as Result & { cycles: unknown[] };
  t.true(report.interrupted);
  t.is(report.cycles.length, json.summary.cycles);
});
