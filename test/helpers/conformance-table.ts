// The rows of `parkbench conformance`'s table as it prints them, cells
// wrapped onto more lines included: the columns are where the header's dashes
// are, and a line with a result starts a row (the lines after it without one
// continue its cells).

export interface TableRow {
  case: string;
  step: string;
  expected: string;
  got: string;
  result: string;
  ms: string;
}

const NAMES = ['case', 'step', 'expected', 'got', 'result', 'ms'] as const;

export function tableRows(output: string): TableRow[] {
  const lines = output.split('\n');
  const dashes = lines.findIndex((line) => /^-+( {2}-+){5}$/.test(line));
  if (dashes === -1) throw new Error(`no table in:\n${output}`);
  const starts = [...(lines[dashes] ?? '').matchAll(/-+/g)].map((match) => match.index);
  const cells = (line: string): string[] =>
    starts.map((start, column) => line.slice(start, starts[column + 1] ?? line.length).trim());
  const rows: string[][] = [];
  for (const line of lines.slice(dashes + 1)) {
    if (line === '') break;
    const parts = cells(line);
    const last = rows.at(-1);
    if (parts[4] !== '' || last === undefined) rows.push(parts);
    else parts.forEach((part, column) => (last[column] = [last[column], part].filter((text) => text !== '').join(' ')));
  }
  return rows.map(
    (parts) => Object.fromEntries(NAMES.map((name, column) => [name, parts[column] ?? ''])) as unknown as TableRow,
  );
}
