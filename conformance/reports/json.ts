// `--json`: the results and the summary as one JSON document.
import type { SuiteReport } from '../case-result.js';

export function renderJson(report: SuiteReport): string {
  return `${JSON.stringify({ results: report.results, summary: report.summary }, null, 2)}\n`;
}
