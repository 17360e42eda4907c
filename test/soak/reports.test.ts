// The reports of a run made of cycles (buildSoakReport), no box: report.json
// parses at any length (written in pieces), junit.xml has a testcase per
// limit with the measured figure in a failure, the plots decimate.
import test from 'ava';
import { CycleLog } from '../../soak/cycle-log.js';
import { parseLimits } from '../../soak/limits.js';
import { renderSoakJunit } from '../../soak/reports/junit.js';
import { renderReportJson, renderResultJson } from '../../soak/reports/result.js';
import { decimate } from '../../soak/reports/svg-plots.js';
import { buildSoakReport } from '../../soak/run-soak.js';
import { assertWellFormedXml } from '../helpers/conformance-fixtures.js';

function reportOf(cycles: number, limits = ['failures==0', 'answer_ms.p99<=5']) {
  const log = new CycleLog();
  for (let index = 0; index < cycles; index++) {
    const failed = index === 7;
    log.push({
      at: 1_000 + index,
      status: failed ? 0x30 : 0,
      answer_ms: failed ? 9 : 1 + (index % 3),
      open_ms: failed ? null : 2,
      cycle_ms: failed ? null : 4,
      battery_mv: 5_000 - index,
      drift_s: 0,
      ...(failed ? { failure: 'status 0x30 BARRIER_FAULT' } : {}),
    });
  }
  return buildSoakReport({
    target: 'serial',
    moduleId: 42,
    access: 'sealed',
    log,
    powerCycles: [],
    limits: parseLimits(limits),
    interrupted: false,
    startedAt: 1_000,
    ms: cycles,
  });
}

test('report.json: the result, the failures and every cycle, parsing at 0, 1 and 2,500 cycles', (t) => {
  for (const cycles of [0, 1, 2_500]) {
    const parsed = JSON.parse(renderReportJson(reportOf(cycles))) as {
      cycles: { cycle: number; failure?: string }[];
      failures: unknown[];
      summary: { cycles: number };
    };
    t.is(parsed.cycles.length, cycles);
    t.is(parsed.summary.cycles, cycles);
    t.is(parsed.cycles.at(-1)?.cycle, cycles === 0 ? undefined : cycles);
  }
  const parsed = JSON.parse(renderReportJson(reportOf(10))) as {
    cycles: { failure?: string; open_ms: number | null }[];
    failures: { cycle: number }[];
  };
  t.deepEqual(
    parsed.failures.map((each) => each.cycle),
    [8],
  );
  t.like(parsed.cycles[7], { failure: 'status 0x30 BARRIER_FAULT', open_ms: null });
});

test('--json: verdicts, summary and measurements, no cycles', (t) => {
  const result = JSON.parse(renderResultJson(reportOf(10))) as Record<string, unknown>;
  t.deepEqual(Object.keys(result).sort(), ['interrupted', 'measurements', 'power_cycles', 'summary', 'verdicts']);
  t.deepEqual(result.verdicts, [
    { limit: 'failures==0', actual: 1, passed: false },
    { limit: 'answer_ms.p99<=5', actual: 9, passed: false },
  ]);
  t.like(result.summary, { cycles: 10, failures: 1, passed: false });
});

test('junit.xml: one testcase per limit, a failure naming the measured figure', (t) => {
  const xml = renderSoakJunit(reportOf(10, ['failures<=1', 'answer_ms.p99<=5']));
  assertWellFormedXml(xml);
  t.is(xml.match(/<testcase /g)?.length, 2);
  t.regex(xml, /<testcase classname="soak.serial" name="failures&lt;=1" time="0"\/>/);
  t.regex(xml, /<failure message="answer_ms.p99&lt;=5: measured 9">/);
  t.regex(xml, /tests="2" failures="1"/);
});

test('the plots: min and max of each pixel column; fewer cycles than columns, one a column', (t) => {
  t.deepEqual(decimate([1, 5, 2, 8, Number.NaN, Number.NaN], 3), [
    [0, 1, 5],
    [1, 2, 8],
  ]);
  t.is(
    decimate(
      Float64Array.from({ length: 100_000 }, (_, index) => index),
      820,
    ).length,
    820,
  );
  t.deepEqual(decimate([3, 4], 820), [
    [0, 3, 3],
    [1, 4, 4],
  ]);
});
