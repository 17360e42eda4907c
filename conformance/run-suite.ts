// Runs the cases one after the other against an open target, then the
// checks over the whole run. A failing case never stops the run: a timeout
// or an exception is that case's failure, and the next case starts afresh.
// An abort (SIGINT, the API stopping, an operator's cancel) stops it at once:
// the wait for the command in flight ends (its answer is not checked). Whatever
// happens, once the suite has touched the box's issuer keys it puts them back.
// With `firstAnswerMs`, the cases wait for the box's first answer
// (first-answer.ts); none in time rejects with SuiteNotStarted. With
// `capture`, each case that runs (and the put-back) is told to it as it
// begins and ends, and its result names the file of what crossed the link.
import type { Clock } from '../lib/clock.js';
import { BarrierWatch } from './barrier-watch.js';
import type { BoxUnderTest } from './box-under-test.js';
import type { BoxTarget } from './box-target.js';
import type { CaseResult, SuiteReport } from './case-result.js';
import { casesFor, type ConformanceCase, type ProtocolVersion } from './cases/index.js';
import { RESTORE_CASE_NAME, restoreIssuerKeys } from './restore-issuers.js';
import { runChecks } from './run-checks.js';
import { SuiteInterrupted } from './interrupted.js';
import { awaitFirstAnswer } from './first-answer.js';
import { CaseRun, SuiteContext, type SuiteIssuers, type SuiteSettings } from './suite-context.js';
import { messageOf } from '../lib/message-of.js';

/** The per-case capture files (--capture-dir): `begin` as a case starts,
 * with its row in the report (1 for the first); `end` as it ends, giving
 * the file of what crossed the link meanwhile, if one was kept. */
export interface CaseCapture {
  begin(row: number, caseName: string): void;
  end(): string | undefined;
}

export interface RunSuiteOptions {
  readonly box: BoxUnderTest;
  /** Open already; the caller closes it. */
  readonly target: BoxTarget;
  readonly clock: Clock;
  readonly settings: SuiteSettings;
  readonly skipWearing?: boolean;
  /** 1: the version 1 cases alone; 2 (the default): every case. */
  readonly protocol?: ProtocolVersion;
  readonly cases?: readonly ConformanceCase[];
  /** Called as each case ends (progress on a terminal). */
  readonly onResult?: (result: CaseResult) => void;
  /** Aborted: no case starts, and the case running sends nothing more and
   * stops waiting at once. The put-back of the issuer keys is sent all the same. */
  readonly signal?: AbortSignal;
  /** Aborted: the wait for the put-back's answer ends at once (the row then
   * fails). Without it, that wait runs its course (--answer-ms). */
  readonly putBackSignal?: AbortSignal;
  readonly capture?: CaseCapture;
  /** The suite's own issuers (default: two fresh ones), given when the
   * caller must know them: a capture opens ACCESS_SIGNED frames with them. */
  readonly issuers?: SuiteIssuers;
}

export async function runSuite(options: RunSuiteOptions): Promise<SuiteReport> {
  const { box, target, clock, settings } = options;
  const barrier = new BarrierWatch(clock, options.signal);
  target.onBarrier((observation) => barrier.add(observation));
  const context = new SuiteContext(
    box,
    target,
    barrier,
    clock,
    settings,
    options.signal,
    options.putBackSignal,
    options.issuers,
  );
  const results: CaseResult[] = [];
  const started = clock.now();
  const record = (result: CaseResult): void => {
    results.push(result);
    options.onResult?.(result);
  };
  if (settings.firstAnswerMs !== undefined) {
    try {
      await awaitFirstAnswer(context, settings.firstAnswerMs);
    } catch (error) {
      // Interrupted while waiting: no case starts, the report says so.
      if (!(error instanceof SuiteInterrupted)) throw error;
    }
  }
  try {
    for (const conformanceCase of options.cases ?? casesFor(box, options.protocol)) {
      if (context.interrupted) break;
      const wearing = conformanceCase.wearing === true;
      const base = {
        name: conformanceCase.name,
        step: conformanceCase.step,
        expected: conformanceCase.expected,
        wearing,
      };
      if (wearing && options.skipWearing === true) {
        record({ ...base, got: '-', result: 'skip', reason: 'wears a real box (--skip-wearing)', ms: 0 });
        continue;
      }
      const run = new CaseRun(context, conformanceCase.name);
      const caseStarted = clock.now();
      options.capture?.begin(results.length + 1, conformanceCase.name);
      try {
        await conformanceCase.run(run);
      } catch (error) {
        run.fail(error instanceof SuiteInterrupted ? 'interrupted' : `the case stopped: ${messageOf(error)}`);
      }
      const ms = clock.now() - caseStarted;
      const got = run.got.length === 0 ? '-' : run.got.join(', ');
      const captured = capturedAs(options.capture?.end());
      if (run.problems.length > 0)
        record({ ...base, got, result: 'fail', reason: run.problems.join('; '), ms, ...captured });
      else if (run.skipped !== undefined)
        record({ ...base, got, result: 'skip', reason: run.skipped, ms, ...captured });
      else record({ ...base, got, result: 'pass', ms, ...captured });
    }
  } finally {
    // Before the checks, so its exchange is checked with the others.
    if (context.issuerKeysTouched) {
      options.capture?.begin(results.length + 1, RESTORE_CASE_NAME);
      const restored = await restoreIssuerKeys(context);
      record({ ...restored, ...capturedAs(options.capture?.end()) });
    }
  }
  for (const check of runChecks({
    exchanges: context.exchanges,
    boxKey: box.boxKey,
    answerMs: settings.answerMs,
    badReports: target.badReports,
  })) {
    record({ ...check, ms: 0, wearing: false });
  }
  const count = (verdict: CaseResult['result']): number => results.filter((result) => result.result === verdict).length;
  return {
    results,
    interrupted: context.interrupted,
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

function capturedAs(file: string | undefined): { capture?: string } {
  return file === undefined ? {} : { capture: file };
}
