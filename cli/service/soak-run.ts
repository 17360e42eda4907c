// A `parkbench soak --record` run as the service keeps it: the run's start
// (its box, link, labels, and what ends and judges it), and at its end one
// result per limit and the summary.
//
// A limit's result: its expression as the name, pass or fail, the run's
// figure as `value` (answer_ms.p99's milliseconds, the failures' count)
// and `ms` 0: a limit takes no time of its own, so the trend of a limit
// across runs is its value, and comparing two runs names the figures that
// moved (the run's duration is the run's own figure, not each limit's).
import type { Limit } from '../../soak/limits.js';
import type { SoakReport } from '../../soak/run-soak.js';
import { soakResult } from '../../soak/reports/result.js';
import type { SoakOptions } from '../soak/flags.js';
import { runLabels, type RecordSettings } from './record-flags.js';
import type { RecordedRunEnd, RunResultInput, RecordedRunStart } from './run-recorder.js';

export function soakRunStart(options: SoakOptions, settings: RecordSettings): RecordedRunStart {
  const { link } = options;
  return {
    module_id: link.provisioning.moduleId,
    kind: 'soak',
    target: link.choice.kind,
    labels: runLabels(link.benchLabels, settings),
    options: {
      ...(options.stop.cycles === undefined ? {} : { cycles: options.stop.cycles }),
      ...(options.stop.durationMs === undefined ? {} : { duration_ms: options.stop.durationMs }),
      ...(options.powerCycleEvery === undefined ? {} : { power_cycle_every: options.powerCycleEvery }),
      answer_ms: link.answerMs,
      cycle_ms: link.cycleMs,
      limits: options.limits.map((limit) => limit.text),
    },
  };
}

export function soakRunResults(report: SoakReport): RunResultInput[] {
  const results = report.verdicts.map((verdict, index): RunResultInput => {
    const limit = report.limits[index];
    return {
      name: verdict.limit,
      result: verdict.passed ? 'pass' : 'fail',
      reason: verdict.passed ? null : verdict.actual === null ? 'nothing measured' : `measured ${verdict.actual}`,
      ms: 0,
      value: verdict.actual,
      details: {
        expression: verdict.limit,
        ...(limit === undefined ? {} : limitDetails(limit)),
        cycles: report.summary.cycles,
      },
    };
  });
  const putBack = report.putBack;
  if (putBack !== undefined)
    results.push({
      name: putBack.name,
      result: putBack.result,
      reason: putBack.reason ?? null,
      ms: putBack.ms,
      details: { step: putBack.step, expected: putBack.expected, got: putBack.got, wearing: putBack.wearing },
    });
  return results;
}

export function soakRunEnd(report: SoakReport): RecordedRunEnd {
  return {
    state: report.interrupted ? 'error' : report.summary.passed ? 'passed' : 'failed',
    summary: { ...report.summary, interrupted: report.interrupted },
    report: soakResult(report),
    ...(report.interrupted ? { error: 'interrupted: the cycles after the last one did not run' } : {}),
  };
}

const UNITS: Readonly<Record<string, string>> = {
  answer_ms: 'ms',
  open_ms: 'ms',
  cycle_ms: 'ms',
  battery_mv: 'mV',
  drift_s: 's',
};

function limitDetails(limit: Limit): Record<string, unknown> {
  if (limit.kind === 'failures') return { measure: 'failures', unit: 'cycles', op: limit.op, bound: limit.value };
  return {
    measure: limit.measure,
    statistic: limit.statistic,
    unit: UNITS[limit.measure],
    op: limit.op,
    bound: limit.value,
  };
}
