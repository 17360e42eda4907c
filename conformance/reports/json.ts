// `--json`: the results, the summary, and whether the run was interrupted
// (SIGINT: the cases after the last result did not run), as one JSON document.
import type { SuiteReport } from '../case-result.js';

export function renderJson(report: SuiteReport): string {
  return `${JSON.stringify(jsonReport(report), null, 2)}\n`;
}

/** The document `--json` prints, as data (a recorded run's report, from which the service renders its JUnit). */
export function jsonReport(report: SuiteReport): {
  results: SuiteReport['results'];
  summary: SuiteReport['summary'];
  interrupted: boolean;
} {
  return { results: report.results, summary: report.summary, interrupted: report.interrupted === true };
}
