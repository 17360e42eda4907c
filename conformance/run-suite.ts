// Runs the cases one after the other against an open target, then the
// checks over the whole run. A failing case never stops the run: a timeout
// or an exception is that case's failure, and the next case starts afresh.
import type { Clock } from '../lib/clock.js';
import { BarrierWatch } from './barrier-watch.js';
import type { BoxUnderTest } from './box-under-test.js';
import type { BoxTarget } from './box-target.js';
import type { CaseResult, SuiteReport } from './case-result.js';
import { allCases, type ConformanceCase } from './cases/index.js';
import { runChecks } from './run-checks.js';
import { CaseRun, SuiteContext, type SuiteSettings } from './suite-context.js';

export interface RunSuiteOptions {
  readonly box: BoxUnderTest;
  /** Open already; the caller closes it. */
  readonly target: BoxTarget;
  readonly clock: Clock;
  readonly settings: SuiteSettings;
  readonly skipWearing?: boolean;
  readonly cases?: readonly ConformanceCase[];
  /** Called as each case ends (progress on a terminal). */
  readonly onResult?: (result: CaseResult) => void;
}

export async function runSuite(options: RunSuiteOptions): Promise<SuiteReport> {
  const { box, target, clock, settings } = options;
  const barrier = new BarrierWatch(clock);
  target.onBarrier((observation) => barrier.add(observation));
  const context = new SuiteContext(box, target, barrier, clock, settings);
  const results: CaseResult[] = [];
  const started = clock.now();
  const record = (result: CaseResult): void => {
    results.push(result);
    options.onResult?.(result);
  };
  for (const conformanceCase of options.cases ?? allCases) {
    const wearing = conformanceCase.wearing === true;
    const base = { name: conformanceCase.name, step: conformanceCase.step, expected: conformanceCase.expected, wearing };
    if (wearing && options.skipWearing === true) {
      record({ ...base, got: '-', result: 'skip', reason: 'wears a real box (--skip-wearing)', ms: 0 });
      continue;
    }
    const run = new CaseRun(context, conformanceCase.name);
    const caseStarted = clock.now();
    try {
      await conformanceCase.run(run);
    } catch (error) {
      run.fail(`the case stopped: ${(error as Error).message}`);
    }
    const ms = clock.now() - caseStarted;
    const got = run.got.length === 0 ? '-' : run.got.join(', ');
    record(run.problems.length === 0 ? { ...base, got, result: 'pass', ms } : { ...base, got, result: 'fail', reason: run.problems.join('; '), ms });
  }
  for (const check of runChecks({ exchanges: context.exchanges, boxKey: box.boxKey, answerMs: settings.answerMs, badReports: target.badReports })) {
    record({ ...check, ms: 0, wearing: false });
  }
  const count = (verdict: CaseResult['result']): number => results.filter((result) => result.result === verdict).length;
  return {
    results,
    summary: {
      target: target.kind,
      module_id: box.moduleId,
      total: results.length,
      passed: count('pass'),
      failed: count('fail'),
      skipped: count('skip'),
      ms: clock.now() - started,
      control_seq: { first: settings.controlSeq, next: context.controlSeq() },
    },
  };
}
