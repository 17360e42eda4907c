// What a run's reports say, as plain data: `--json` prints the result
// (verdicts, summary, measurements), report.json adds every cycle.
import type { SoakReport } from '../run-soak.js';

export function soakResult(report: SoakReport): Record<string, unknown> {
  return {
    summary: report.summary,
    verdicts: report.verdicts,
    measurements: report.measurements,
    interrupted: report.interrupted,
    power_cycles: report.powerCycles.map((each) => ({
      before_cycle: each.beforeCycle,
      ms: each.ms,
      ...(each.failure === undefined ? {} : { failure: each.failure }),
    })),
    ...(report.putBack === undefined ? {} : { put_back: report.putBack }),
  };
}

/** `--json`: the result, without the cycles. */
export function renderResultJson(report: SoakReport): string {
  return `${JSON.stringify(soakResult(report), null, 2)}\n`;
}

/** report.json in pieces: the result and every failure, then the cycles
 * (one a line, so a long run's file reads in a pager), a thousand a piece,
 * so a run of millions of cycles is written without one string of it all. */
export function* reportJsonChunks(report: SoakReport): Generator<string> {
  const head = JSON.stringify(
    { ...soakResult(report), started_at: new Date(report.startedAt).toISOString(), failures: report.log.failures },
    null,
    2,
  );
  yield `${head.slice(0, -2)},\n  "cycles": [`;
  let lines: string[] = [];
  let first = true;
  for (const record of report.log.records()) {
    lines.push(`${first ? '\n' : ',\n'}    ${JSON.stringify(record)}`);
    first = false;
    if (lines.length === 1_000) {
      yield lines.join('');
      lines = [];
    }
  }
  yield `${lines.join('')}\n  ]\n}\n`;
}

/** report.json as one string (a run of a size that fits one). */
export function renderReportJson(report: SoakReport): string {
  return [...reportJsonChunks(report)].join('');
}
