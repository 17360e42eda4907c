// The terminal table: case, step, expected, got, result, ms; the reasons of
// failures below it, in full, then one summary line. The table fits the
// width it is given (the terminal's): the widest of the text columns give
// way first, their cells wrapped onto more lines, so nothing is cut.
import type { CaseResult, SuiteReport } from '../case-result.js';

const COLUMNS = ['case', 'step', 'expected', 'got', 'result', 'ms'] as const;
/** The columns that wrap (case, step, expected, got); result and ms never do. */
const WRAPPING = 4;
/** Which columns give way, in turn, each down to its floor: the step,
 * expected and got first, then the case's name, then all four further. */
const GIVING_WAY: readonly { columns: readonly number[]; floor: number }[] = [
  { columns: [1, 2, 3], floor: 16 },
  { columns: [0], floor: 24 },
  { columns: [0, 1, 2, 3], floor: 8 },
];
const GAP = '  ';
/** The width when the output is no terminal (piped, redirected). */
export const DEFAULT_TABLE_WIDTH = 100;

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

/** Column widths whose lines fit `width`: in each turn of GIVING_WAY, the
 * widest of its columns narrowed one character at a time while the total is
 * over. A width too narrow for every floor leaves the lines longer. */
function fitWidths(natural: readonly number[], width: number): number[] {
  const widths = [...natural];
  const total = (): number => widths.reduce((sum, each) => sum + each, 0) + GAP.length * (widths.length - 1);
  for (const { columns, floor } of GIVING_WAY) {
    while (total() > width) {
      const narrowable = columns.filter((column) => (widths[column] ?? 0) > floor);
      const widest = narrowable.reduce<number | undefined>(
        (best, column) => (best === undefined || (widths[column] ?? 0) > (widths[best] ?? 0) ? column : best),
        undefined,
      );
      if (widest === undefined) break;
      widths[widest] = (widths[widest] ?? 0) - 1;
    }
  }
  return widths;
}

/** `text` in lines of at most `width` characters, broken at spaces where it can be. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let rest = text;
  while (rest.length > width) {
    const space = rest.lastIndexOf(' ', width);
    const cut = space > 0 ? space : width;
    lines.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
  }
  lines.push(rest);
  return lines;
}

export function renderTable(report: SuiteReport, width = DEFAULT_TABLE_WIDTH): string {
  const rows = report.results.map(row);
  const natural = COLUMNS.map((title, column) =>
    Math.max(title.length, ...rows.map((cells) => (cells[column] ?? '').length)),
  );
  const widths = fitWidths(natural, width);
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, column) =>
        column === cells.length - 1 ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0),
      )
      .join(GAP)
      .trimEnd();
  const lines = (cells: readonly string[]): string[] => {
    const wrapped = cells.map((cell, column) => (column < WRAPPING ? wrap(cell, widths[column] ?? 0) : [cell]));
    const height = Math.max(...wrapped.map((each) => each.length));
    return Array.from({ length: height }, (_, index) => line(wrapped.map((each) => each[index] ?? '')));
  };
  const out = [line(COLUMNS), line(widths.map((each) => '-'.repeat(each))), ...rows.flatMap(lines)];
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
