// A `parkbench conformance --record` run as the service keeps it: the run's
// start (its box, link, labels and options), each case's result as it
// ends, and its end (the verdict, the summary, the suite's report, from
// which the service renders the run's JUnit, and the capture files).
import { resolve } from 'node:path';
import { passedAll, type CaseResult, type SuiteReport } from '../../conformance/case-result.js';
import { jsonReport } from '../../conformance/reports/json.js';
import type { ConformanceOptions } from '../conformance/flags.js';
import { runLabels, type RecordSettings } from './record-flags.js';
import type { RecordedRunEnd, RunResultInput, RecordedRunStart } from './run-recorder.js';

export function conformanceRunStart(options: ConformanceOptions, settings: RecordSettings): RecordedRunStart {
  return {
    module_id: options.provisioning.moduleId,
    kind: 'conformance',
    target: options.choice.kind,
    labels: runLabels(options.benchLabels, settings),
    options: {
      skip_wearing: options.skipWearing,
      protocol: options.protocol,
      answer_ms: options.answerMs,
      cycle_ms: options.cycleMs,
    },
  };
}

export function caseResultInput(result: CaseResult): RunResultInput {
  return {
    name: result.name,
    result: result.result,
    reason: result.reason ?? null,
    ms: result.ms,
    details: {
      step: result.step,
      expected: result.expected,
      got: result.got,
      wearing: result.wearing,
      ...(result.capture === undefined ? {} : { capture: resolve(result.capture) }),
    },
  };
}

/** The end of a run the suite finished (or was interrupted in: an error, the report says what ran). */
export function conformanceRunEnd(report: SuiteReport, runCaptures: readonly string[]): RecordedRunEnd {
  const interrupted = report.interrupted === true;
  const caseCaptures = report.results.flatMap((result) => (result.capture === undefined ? [] : [result.capture]));
  return {
    state: interrupted ? 'error' : passedAll(report) ? 'passed' : 'failed',
    summary: { ...report.summary, interrupted },
    report: jsonReport(report),
    ...(interrupted ? { error: 'interrupted: the cases after the last result did not run' } : {}),
    captures: [...runCaptures, ...caseCaptures].map((path) => resolve(path)),
  };
}
