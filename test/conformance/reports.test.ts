// The three outputs of a run: the table, the JSON and the JUnit XML.
import test from 'ava';
import type { SuiteReport } from '../../conformance/case-result.js';
import { renderJson } from '../../conformance/reports/json.js';
import { renderJunit } from '../../conformance/reports/junit.js';
import { renderTable } from '../../conformance/reports/table.js';
import { assertWellFormedXml } from '../helpers/conformance-fixtures.js';

const report: SuiteReport = {
  results: [
    {
      name: 'valid <ACCESS> & co',
      step: 'checks, step 7',
      expected: '0x00',
      got: '0x00',
      result: 'pass',
      ms: 12,
      wearing: false,
    },
    {
      name: 'a key with 2 tries',
      step: 'checks, step 9',
      expected: '0x00, 0x00, 0x12',
      got: '-',
      result: 'skip',
      reason: 'wears a real box (--skip-wearing)',
      ms: 0,
      wearing: true,
    },
    {
      name: 'not_after just outside',
      step: 'checks, step 7',
      expected: '0x11',
      got: '0x00',
      result: 'fail',
      reason: 'status 0x00 OK, expected 0x11 EXPIRED "quoted" \u0001',
      ms: 3,
      wearing: false,
    },
  ],
  summary: {
    target: 'serial',
    module_id: 9101,
    total: 3,
    passed: 1,
    failed: 1,
    skipped: 1,
    ms: 1234,
    control_seq: { first: 10, next: 14 },
  },
  interrupted: false,
};

test('the table has a row per case, the reasons of failures, and a summary line', (t) => {
  const lines = renderTable(report).split('\n');
  t.regex(lines[0] ?? '', /^case\s+step\s+expected\s+got\s+result\s+ms$/);
  t.regex(lines[2] ?? '', /^valid <ACCESS> & co\s+checks, step 7\s+0x00\s+0x00\s+pass\s+12$/);
  t.regex(lines[3] ?? '', /^a key with 2 tries \(wearing\)\s+.*\s+skip\s+0$/);
  t.regex(lines[4] ?? '', /^not_after just outside\s+.*0x11\s+0x00\s+FAIL\s+3$/);
  t.true(lines.includes('  not_after just outside: status 0x00 OK, expected 0x11 EXPIRED "quoted" \u0001'));
  t.true(lines.includes('1 passed, 1 failed, 1 skipped of 3 (serial, module 9101, 1234 ms)'));
});

test('the table fits the width it is given: the widest text columns wrap, nothing is cut, result and ms stay whole', (t) => {
  const long: SuiteReport = {
    ...report,
    results: [
      {
        name: 'ACCESS_SIGNED whose signature is valid under the previous issuer key after a rotation',
        step: 'checks, step 4 (issuer_key_previous, until SET_ISSUER with clear_previous)',
        expected: '0x00 OK, then 0x13 BAD_SIGNATURE once the previous key is cleared by SET_ISSUER',
        got: '0x00 OK, then 0x00 OK: the box still accepts the previous issuer key after clear_previous',
        result: 'fail',
        reason: 'accepted after clear_previous',
        ms: 48_213,
        wearing: false,
      },
    ],
  };
  const wide = renderTable(long, 1_000).split('\n');
  t.true(
    wide.some((line) => line.length > 252),
    'one line a row when the width allows',
  );
  for (const width of [100, 80]) {
    const lines = renderTable(long, width).split('\n');
    const table = lines.slice(0, lines.indexOf(''));
    t.true(
      table.every((line) => line.length <= width),
      `${width}: ${JSON.stringify(table.map((line) => line.length))}`,
    );
    t.regex(table[2] ?? '', /\s{2}FAIL\s{2}\s*48213$/, "result and ms on the row's first line");
    // Every word of the longest cells is there: wrapped, not cut.
    const body = table.slice(2).join(' ');
    for (const word of [...(long.results[0]?.name.split(' ') ?? []), ...(long.results[0]?.got.split(' ') ?? [])])
      t.true(body.includes(word), `${width}: "${word}" is shown`);
  }
  // Narrower still: a word longer than its column is broken inside.
  const narrow = renderTable(long, 60).split('\n');
  t.true(narrow.slice(0, narrow.indexOf('')).every((line) => line.length <= 60));
  t.is(renderTable(report), renderTable(report, 100), 'width 100 when none is given');
});

test('the JSON is the results, the summary and whether the run was interrupted', (t) => {
  t.deepEqual(JSON.parse(renderJson(report)), JSON.parse(JSON.stringify(report)));
  t.is((JSON.parse(renderJson({ ...report, interrupted: true })) as { interrupted: boolean }).interrupted, true);
});

test('an interrupted run says so above the summary line', (t) => {
  t.notRegex(renderTable(report), /interrupted/);
  t.regex(
    renderTable({ ...report, interrupted: true }),
    /\ninterrupted \(SIGINT\): the cases after the last one shown did not run\n\n1 passed/,
  );
});

test('the JUnit XML is well formed, escaped, with a testcase per case', (t) => {
  const xml = renderJunit(report);
  t.notThrows(() => assertWellFormedXml(xml));
  t.regex(
    xml,
    /<testsuite name="parkbench conformance \(serial, module 9101\)" tests="3" failures="1" errors="0" skipped="1" time="1.234">/,
  );
  t.regex(xml, /<testcase classname="conformance.serial" name="valid &lt;ACCESS&gt; &amp; co" time="0.012"\/>/);
  t.regex(xml, /<skipped message="wears a real box \(--skip-wearing\)"\/>/);
  t.regex(
    xml,
    /<failure message="status 0x00 OK, expected 0x11 EXPIRED &quot;quoted&quot; ">step: checks, step 7; expected: 0x11; got: 0x00<\/failure>/,
  );
  t.throws(() => assertWellFormedXml('<a><b></a>'));
});

test("the JUnit XML attaches each case's capture file in its testcase's <system-out>, after the verdict", (t) => {
  const [passed, skipped, failed] = report.results;
  if (passed === undefined || skipped === undefined || failed === undefined) throw new Error('three results');
  const xml = renderJunit({
    ...report,
    results: [
      { ...passed, capture: '/runs/R&D/01-valid-access-co.pcapng' },
      skipped,
      { ...failed, capture: '/runs/R&D/03-not-after-just-outside.pcapng' },
    ],
  });
  t.notThrows(() => assertWellFormedXml(xml));
  t.regex(
    xml,
    /<testcase [^>]*name="valid &lt;ACCESS&gt; &amp; co" time="0.012">\n {6}<system-out>\[\[ATTACHMENT\|\/runs\/R&amp;D\/01-valid-access-co\.pcapng\]\]<\/system-out>\n {4}<\/testcase>/,
  );
  t.regex(
    xml,
    /<\/failure>\n {6}<system-out>\[\[ATTACHMENT\|\/runs\/R&amp;D\/03-not-after-just-outside\.pcapng\]\]<\/system-out>\n {4}<\/testcase>/,
  );
  t.is(xml.match(/<system-out>/g)?.length, 2, 'none for a case without a file');
  t.is(renderJunit(report).match(/<system-out>/g), null);
});

test("the JUnit XML attaches the whole run's capture files in the testsuite's <system-out>, after the testcases", (t) => {
  const xml = renderJunit(report, { runCaptures: ['/runs/R&D/run_00001.pcapng', '/runs/R&D/run_00002.pcapng'] });
  t.notThrows(() => assertWellFormedXml(xml));
  t.regex(
    xml,
    /<\/testcase>\n {4}<system-out>\[\[ATTACHMENT\|\/runs\/R&amp;D\/run_00001\.pcapng\]\]\n\[\[ATTACHMENT\|\/runs\/R&amp;D\/run_00002\.pcapng\]\]<\/system-out>\n {2}<\/testsuite>/,
  );
  t.is(renderJunit(report, { runCaptures: [] }).match(/<system-out>/g), null);
});
