// `--json`: the results, the summary, and whether the run was interrupted
// (SIGINT: the cases after the last result did not run), as one JSON document.
import type { SuiteReport } from '../case-result.js';

export function renderJson(report: SuiteReport): string {
  return `${JSON.stringify({ results: report.results, summary: report.summary, interrupted: report.interrupted === true }, null, 2)}\n`;
}
