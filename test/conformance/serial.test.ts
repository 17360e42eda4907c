// The suite through the real command line against `parkbench sim` on a real
// pty pair (socat): a correct box passes every case, sealed or signed; a box
// with a firmware bug fails, sealed or signed, and the failing case is the
// one the bug breaks.
import avaTest from 'ava';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { casesFor } from '../../conformance/cases/index.js';
import { conformanceOnSerial, simOnPty } from '../helpers/conformance-serial-sim.js';
import { runCli } from '../helpers/run-cli.js';
import { tableRows } from '../helpers/conformance-table.js';
import { assertWellFormedXml, keysOf, reportRows, type JsonReport } from '../helpers/conformance-fixtures.js';
import { testNeeding } from '../helpers/requires.js';

// Skipped, with one line naming the package, where socat is not installed (a failure under CI).
const test = testNeeding('socat', avaTest);

/** The window's four edges (step 7) by ACCESS_SIGNED: a box without K_park has no sealed ones. */
const SIGNED_WINDOW_CASES = [
  'ACCESS_SIGNED not_before just inside the skew',
  'ACCESS_SIGNED not_before just outside the skew',
  'ACCESS_SIGNED not_after just inside the skew',
  'ACCESS_SIGNED not_after just outside the skew',
];

/** Step 9 by ACCESS_SIGNED: a box without K_park has no sealed tries case. */
const SIGNED_TRIES_CASE = 'ACCESS_SIGNED a key with 2 tries, used 3 times';

test('a simulated box on a pty passes every case; the table says so; exit 0', async (t) => {
  const { box, pair } = await simOnPty(t, 4101);
  const result = await runCli(['conformance', '--box', box.path, '--serial', pair.b, '--cycle-ms', '5000']);
  t.is(result.code, 0, result.stdout + result.stderr);
  // Not a terminal: the table fits 100 columns, its cells wrapped onto more lines where they must.
  const table = result.stdout.slice(0, result.stdout.indexOf('\n\n'));
  t.true(
    table.split('\n').every((line) => line.length <= 100),
    table,
  );
  const rows = tableRows(result.stdout);
  for (const conformanceCase of casesFor(box.provisioning)) {
    // The power cycle needs a target that can restart the box: none on the command line.
    const verdict = conformanceCase.name.includes('power cycle') ? 'skip' : 'pass';
    t.like(
      rows.find((each) => each.case.replace(/ \(wearing\)$/, '') === conformanceCase.name),
      { result: verdict },
      conformanceCase.name,
    );
  }
  const count = reportRows(box.provisioning);
  t.is(rows.length, count);
  t.regex(
    result.stdout,
    new RegExp(`^${count - 1} passed, 0 failed, 1 skipped of ${count} \\(serial, module 4101, `, 'm'),
  );
  t.notRegex(result.stdout, /FAIL/);
});

test('a box of a signed parking on a pty passes every case (ACCESS_SIGNED, REVOKE and SET_ISSUER over the serial link)', async (t) => {
  const { box, pair } = await simOnPty(t, 4104, [], keysOf('signed'));
  const result = await conformanceOnSerial(box, pair.b);
  t.is(result.code, 0, result.stdout + result.stderr);
  const report = JSON.parse(result.stdout) as JsonReport;
  t.is(report.summary.total, reportRows(box.provisioning));
  t.is(report.summary.failed, 0, JSON.stringify(report.results.filter((entry) => entry.result === 'fail')));
  t.is(report.summary.skipped, 1);
  const passed = report.results.filter((entry) => entry.result === 'pass').map((entry) => entry.name);
  for (const name of [
    'valid ACCESS_SIGNED opens; barrier OPENING then CLOSED',
    ...SIGNED_WINDOW_CASES,
    'ACCESS_SIGNED for another parking',
    'ACCESS_SIGNED whose module list lacks this box',
    SIGNED_TRIES_CASE,
  ])
    t.true(passed.includes(name), name);
});

test('a box of a signed parking with the accept-expired bug fails exactly the ACCESS_SIGNED not_after case (step 7)', async (t) => {
  const { box, pair } = await simOnPty(t, 4105, ['--bug', 'accept-expired'], keysOf('signed'));
  const result = await conformanceOnSerial(box, pair.b);
  t.is(result.code, 1, result.stderr);
  const report = JSON.parse(result.stdout) as JsonReport;
  t.is(report.summary.total, reportRows(box.provisioning));
  const failed = report.results.filter((entry) => entry.result === 'fail');
  t.deepEqual(
    failed.map((entry) => entry.name),
    ['ACCESS_SIGNED not_after just outside the skew'],
  );
  t.like(failed[0], { step: 'checks, step 7', expected: '0x11', got: '0x00' });
  t.regex(failed[0]?.reason ?? '', /status 0x00 OK, expected 0x11 EXPIRED/);
  // The other three edges pass: the bug changes only what EXPIRED would have been.
  for (const name of SIGNED_WINDOW_CASES.filter((each) => !each.startsWith('ACCESS_SIGNED not_after just outside')))
    t.like(
      report.results.find((entry) => entry.name === name),
      { result: 'pass' },
      name,
    );
});

test('--json parses, --junit writes well-formed XML with the same counts', async (t) => {
  const { box, pair } = await simOnPty(t, 4102);
  const junit = join(box.directory, 'report.xml');
  const result = await conformanceOnSerial(box, `${pair.b}:115200`, ['--junit', junit, '--skip-wearing']);
  t.is(result.code, 0, result.stderr);
  const report = JSON.parse(result.stdout) as JsonReport;
  t.is(report.summary.total, reportRows(box.provisioning));
  t.is(report.summary.skipped, 3);
  t.is(report.summary.failed, 0);
  t.is(report.summary.passed, report.summary.total - 3);
  const skipped = report.results.filter((entry) => entry.result === 'skip');
  t.deepEqual(
    skipped.map((entry) => entry.name),
    [
      'a key with 2 tries, used 3 times',
      'issuer keys, revocations, tries and the control sequence survive a power cycle',
      'REVOKE at the 65th live entry is REVOCATION_FULL (or the box says it holds more)',
    ],
  );
  t.deepEqual(
    skipped.map((entry) => entry.wearing),
    [true, false, true],
  );
  const xml = await readFile(junit, 'utf8');
  t.notThrows(() => assertWellFormedXml(xml));
  t.is(xml.match(/<testcase /g)?.length, report.summary.total);
  t.is(xml.match(/<skipped /g)?.length, 3);
  t.notRegex(xml, /<failure /);
  t.regex(xml, new RegExp(`<testsuite [^>]*tests="${report.summary.total}" failures="0" errors="0" skipped="3"`));
});

test('a box with the accept-expired bug fails the suite: exit 1, and the EXPIRED case is the one that failed', async (t) => {
  const { box, pair } = await simOnPty(t, 4103, ['--bug', 'accept-expired']);
  const junit = join(box.directory, 'report.xml');
  const result = await conformanceOnSerial(box, pair.b, ['--junit', junit]);
  t.is(result.code, 1, result.stderr);
  const report = JSON.parse(result.stdout) as JsonReport;
  const failed = report.results.filter((entry) => entry.result === 'fail');
  t.deepEqual(
    failed.map((entry) => entry.name),
    ['not_after just outside the skew'],
  );
  t.is(failed[0]?.expected, '0x11');
  t.is(failed[0]?.got, '0x00');
  t.regex(failed[0]?.reason ?? '', /status 0x00 OK, expected 0x11 EXPIRED/);
  t.is(report.summary.failed, 1);
  const xml = await readFile(junit, 'utf8');
  t.notThrows(() => assertWellFormedXml(xml));
  t.is(xml.match(/<failure /g)?.length, 1);
  t.regex(
    xml,
    /<testcase [^>]*name="not_after just outside the skew"[^>]*>\s*<failure message="status 0x00 OK, expected 0x11 EXPIRED/,
  );
});
