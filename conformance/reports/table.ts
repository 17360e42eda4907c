// The terminal table: case, step, expected, got, result, ms; the reasons of
// failures below it, in full, then one summary line.
import type { CaseResult, SuiteReport } from '../case-result.js';

const COLUMNS = ['case', 'step', 'expected', 'got', 'result', 'ms'] as const;

function row(result: CaseResult): string[] {
  const verdict = result.result === 'pass' ? 'pass' : result.result === 'skip' ? 'skip' : 'FAIL';
  return [
    result.wearing ? `${result.name} (wearing)` : result.name,
    result.step,
    result.expected,
    result.got,
    verdict,
    String(result.ms),
  ];
}

export function renderTable(report: SuiteReport): string {
  const rows = report.results.map(row);
  const widths = COLUMNS.map((title, column) =>
    Math.max(title.length, ...rows.map((cells) => (cells[column] ?? '').length)),
  );
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, column) =>
        column === cells.length - 1 ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0),
      )
      .join('  ')
      .trimEnd();
  const out = [line(COLUMNS), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)];
  const failures = report.results.filter((result) => result.result === 'fail');
  if (failures.length > 0) {
    out.push('', 'failures:');
    for (const failure of failures) out.push(`  ${failure.name}: ${failure.reason ?? 'failed'}`);
  }
  const { summary } = report;
  if (report.interrupted === true) out.push('', 'interrupted (SIGINT): the cases after the last one shown did not run');
  out.push(
    '',
    `${summary.passed} passed, ${summary.failed} failed, ${summary.skipped} skipped of ${summary.total} (${summary.target}, module ${summary.module_id}, ${summary.ms} ms)`,
  );
  return `${out.join('\n')}\n`;
}
