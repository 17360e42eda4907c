// compareRuns (api/runs/compare.ts): each case's change, their order, the counts, the figures.
import test from 'ava';
import { compareRuns } from '../../../api/runs/index.js';
import type { RunResultView, RunWithResults } from '../../../api/runs/index.js';

function result(name: string, verdict: RunResultView['result'], ms = 20, value: number | null = null): RunResultView {
  return { name, result: verdict, reason: verdict === 'pass' ? null : `${name} ${verdict}`, ms, value, details: {} };
}

function run(
  id: string,
  results: RunResultView[],
  summary: Record<string, unknown> | null,
  durationMs = 1_000,
): RunWithResults {
  return {
    id,
    module_id: 101,
    kind: 'conformance',
    source: 'cli',
    started_by: 'bench',
    state: 'passed',
    target: 'mqtt',
    labels: {},
    started_at: '2026-06-01T08:00:00.000Z',
    ended_at: '2026-06-01T08:00:01.000Z',
    duration_ms: durationMs,
    error: null,
    options: {},
    summary,
    captures: [],
    results,
  };
}

test('regressed first, then fixed, new, gone, same, each in the order of a (b for the new); counts and the ms delta', (t) => {
  const a = run(
    'a',
    [
      result('same pass', 'pass'),
      result('fixed', 'fail'),
      result('regressed 1', 'pass'),
      result('gone', 'pass'),
      result('skip then fail', 'skip'),
      result('fail then skip', 'fail'),
      result('both fail', 'fail'),
    ],
    null,
  );
  const b = run(
    'b',
    [
      result('new one', 'fail'),
      result('skip then fail', 'fail'),
      result('both fail', 'fail', 25),
      result('fail then skip', 'skip'),
      result('regressed 1', 'fail'),
      result('fixed', 'pass'),
      result('same pass', 'pass', 15),
    ],
    null,
  );
  const comparison = compareRuns(a, b);
  t.deepEqual(
    comparison.cases.map((entry) => [entry.name, entry.change]),
    [
      ['regressed 1', 'regressed'],
      ['skip then fail', 'regressed'],
      ['fixed', 'fixed'],
      ['fail then skip', 'fixed'],
      ['new one', 'new'],
      ['gone', 'gone'],
      ['same pass', 'same'],
      ['both fail', 'same'],
    ],
  );
  t.deepEqual(comparison.counts, { regressed: 2, fixed: 2, same: 2, new: 1, gone: 1 });
  const byName = new Map(comparison.cases.map((entry) => [entry.name, entry]));
  t.deepEqual(byName.get('regressed 1'), {
    name: 'regressed 1',
    change: 'regressed',
    a: { result: 'pass', reason: null, ms: 20, value: null },
    b: { result: 'fail', reason: 'regressed 1 fail', ms: 20, value: null },
    ms_delta: 0,
  });
  t.like(byName.get('new one'), { a: null, ms_delta: null });
  t.like(byName.get('gone'), { b: null, ms_delta: null });
  t.is(byName.get('same pass')?.ms_delta, -5);
  t.false('results' in comparison.a);
  t.false('results' in comparison.b);
});

test('figures: the duration and summary numbers that differ, and each case whose time moved by more than 25 % and 10 ms', (t) => {
  const a = run(
    'a',
    [
      result('slow now', 'pass', 40),
      result('a bit slower', 'pass', 100),
      result('tiny', 'pass', 2),
      result('steady', 'pass', 500),
    ],
    {
      total: 4,
      passed: 4,
      failed: 0,
      skipped: 0,
      ms: 1_000,
      module_id: 101,
      control_seq: { first: 1, next: 9 },
      interrupted: false,
    },
    1_000,
  );
  const b = run(
    'b',
    [
      result('slow now', 'pass', 60),
      result('a bit slower', 'pass', 120),
      result('tiny', 'pass', 11),
      result('steady', 'pass', 380),
    ],
    {
      total: 4,
      passed: 4,
      failed: 0,
      skipped: 0,
      ms: 1_200,
      module_id: 102,
      control_seq: { first: 9, next: 20 },
      interrupted: false,
    },
    1_250,
  );
  t.deepEqual(compareRuns(a, b).figures, [
    { name: 'duration_ms', a: 1_000, b: 1_250, delta: 250 },
    { name: 'ms', a: 1_000, b: 1_200, delta: 200 },
    // 40 -> 60: +50 % and 20 ms. 100 -> 120: 20 %. 2 -> 11: 9 ms. 500 -> 380: -24 %.
    { name: 'ms:slow now', a: 40, b: 60, delta: 20 },
  ]);
});

test("a soak's figures: its summary numbers, a figure one run lacks with no delta", (t) => {
  const a = run('a', [result('answer_ms.p99 < 500', 'pass', 0, 320)], {
    cycles: 400,
    failures: 0,
    rate: 6.5,
    passed: true,
  });
  const b = run('b', [result('answer_ms.p99 < 500', 'fail', 0, 640)], {
    cycles: 380,
    failures: 2,
    rate: 6.5,
    passed: false,
    power_cycles: 1,
  });
  const comparison = compareRuns({ ...a, kind: 'soak' }, { ...b, kind: 'soak' });
  t.deepEqual(comparison.figures, [
    { name: 'cycles', a: 400, b: 380, delta: -20 },
    { name: 'failures', a: 0, b: 2, delta: 2 },
    { name: 'power_cycles', a: null, b: 1, delta: null },
    { name: 'value:answer_ms.p99 < 500', a: 320, b: 640, delta: 320 },
  ]);
  t.deepEqual(comparison.cases[0]?.b, { result: 'fail', reason: 'answer_ms.p99 < 500 fail', ms: 0, value: 640 });
  t.is(comparison.cases[0]?.change, 'regressed');
});

test("a soak limit's measured value that moved is a figure named after its expression, in a's order; one that stayed, or a limit only one run has, is none", (t) => {
  const summary = { cycles: 400, failures: 0, rate: 6.5, passed: true };
  const a = run(
    'a',
    [
      result('failures == 0', 'pass', 0, 0),
      result('answer_ms.p99<=250', 'pass', 0, 80),
      result('answer_ms.p50<=100', 'pass', 0, 41.5),
      result('rate>=5', 'pass', 0, 6.5),
      result('gone<=1', 'pass', 0, 1),
      result('unmeasured<=1', 'pass', 0, null),
    ],
    summary,
  );
  const b = run(
    'b',
    [
      result('rate>=5', 'pass', 0, 6.5),
      result('answer_ms.p50<=100', 'pass', 0, 40),
      result('answer_ms.p99<=250', 'pass', 0, 140),
      result('failures == 0', 'pass', 0, 0),
      result('new<=1', 'pass', 0, 1),
      result('unmeasured<=1', 'pass', 0, 3),
    ],
    summary,
  );
  const comparison = compareRuns({ ...a, kind: 'soak' }, { ...b, kind: 'soak' });
  t.deepEqual(comparison.figures, [
    { name: 'value:answer_ms.p99<=250', a: 80, b: 140, delta: 60 },
    { name: 'value:answer_ms.p50<=100', a: 41.5, b: 40, delta: -1.5 },
    { name: 'value:unmeasured<=1', a: null, b: 3, delta: null },
  ]);
  // The rows still show both values.
  const p99 = comparison.cases.find((entry) => entry.name === 'answer_ms.p99<=250');
  t.like(p99, { change: 'same', a: { value: 80 }, b: { value: 140 }, ms_delta: 0 });
  // A conformance case has no value: never a value figure.
  t.deepEqual(
    compareRuns(run('a', [result('access opens', 'pass')], null), run('b', [result('access opens', 'fail')], null))
      .figures,
    [],
  );
});
