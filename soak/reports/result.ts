// What a run's reports say, as plain data: `--json` prints the result
// (verdicts, summary, measurements), report.json adds every cycle.
import type { SoakReport } from '../run-soak.js';

export function soakResult(report: SoakReport): Record<string, unknown> {
  return {
    summary: report.summary,
    verdicts: report.verdicts,
    measurements: report.measurements,
    interrupted: report.interrupted,
    power_cycles: report.powerCycles,
    ...(report.putBack === undefined ? {} : { put_back: report.putBack }),
  };
}

/** `--json`: the result, without the cycles. */
export function renderResultJson(report: SoakReport): string {
  return `${JSON.stringify(soakResult(report), null, 2)}\n`;
}

/** report.json: the result, every failure and every cycle (one a line, so a long run's file reads in a pager). */
export function renderReportJson(report: SoakReport): string {
  const head = JSON.stringify(
    { ...soakResult(report), started_at: new Date(report.startedAt).toISOString(), failures: report.log.failures },
    null,
    2,
  );
  const cycles: string[] = [];
  for (const record of report.log.records()) cycles.push(`    ${JSON.stringify(record)}`);
  return `${head.slice(0, -2)},\n  "cycles": [\n${cycles.join(',\n')}\n  ]\n}\n`;
}
