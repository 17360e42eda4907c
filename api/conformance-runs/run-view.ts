// A conformance run as the operator API answers it (GET
// /api/operator/conformance/:run_id, and the `conformance` event of the
// bench page's stream): its cases as they ended, in the CLI's words, and a
// summary that is the CLI's once the run has ended (counts so far before).
// Types rather than interfaces, so that they fit the open object types the
// route derives from its response schema.
import type { CaseResult, SuiteReport } from '../../conformance/case-result.js';
import type { RunState } from '../runs/index.js';

export type RunCaseView = {
  name: string;
  step: string;
  expected: string;
  got: string;
  result: CaseResult['result'];
  reason: string | null;
  ms: number;
  wearing: boolean;
};

export type RunSummaryView = {
  target: 'mqtt';
  module_id: number;
  total: number;
  passed: number;
  failed: number;
  skipped: number;
  /** From the start to the last case (while running: to now). */
  ms: number;
  /** The run's control sequences: `next` once it has ended. */
  control_seq: { first: number; next: number | null };
  /** Stopped before every case ran (the API was stopping). */
  interrupted: boolean;
};

export type ConformanceRunView = {
  id: string;
  module_id: number;
  state: RunState;
  started_at: string;
  ended_at: string | null;
  /** Why the run ended in `error` (the broker could not be reached, the API stopped); null otherwise. */
  error: string | null;
  options: { skip_wearing: boolean; protocol: 1 | 2; answer_ms: number; cycle_ms: number };
  cases: RunCaseView[];
  summary: RunSummaryView;
};

export function caseView(result: CaseResult): RunCaseView {
  return {
    name: result.name,
    step: result.step,
    expected: result.expected,
    got: result.got,
    result: result.result,
    reason: result.reason ?? null,
    ms: result.ms,
    wearing: result.wearing,
  };
}

/** The summary: the report's once there is one, else counted over the cases so far. */
export function summaryView(
  moduleId: number,
  results: readonly CaseResult[],
  elapsedMs: number,
  firstControlSeq: number,
  report: SuiteReport | undefined,
): RunSummaryView {
  const count = (verdict: CaseResult['result']): number => results.filter((result) => result.result === verdict).length;
  if (report !== undefined) {
    const { summary } = report;
    return {
      target: 'mqtt',
      module_id: summary.module_id,
      total: summary.total,
      passed: summary.passed,
      failed: summary.failed,
      skipped: summary.skipped,
      ms: summary.ms,
      control_seq: { first: summary.control_seq.first, next: summary.control_seq.next },
      interrupted: report.interrupted === true,
    };
  }
  return {
    target: 'mqtt',
    module_id: moduleId,
    total: results.length,
    passed: count('pass'),
    failed: count('fail'),
    skipped: count('skip'),
    ms: elapsedMs,
    control_seq: { first: firstControlSeq, next: null },
    interrupted: false,
  };
}
