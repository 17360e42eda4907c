// Two runs side by side (GET /api/operator/runs/compare): a is the base
// (before), b the other (after). Each case (or soak limit) by name:
// regressed when b failed and a did not, fixed when a failed and b did not,
// same otherwise; new when only b has it, gone when only a has it. The
// figures are the numbers that differ: the duration, the summary's numbers,
// each case whose time moved by more than MS_MOVED_RATIO and MS_MOVED_MIN
// (`ms:<case>`), and each soak limit whose measured value differs
// (`value:<limit's expression>`: a limit's result is named by it).
import type { RunResultView, RunVerdict, RunView, RunWithResults } from './view.js';

export type CaseChange = 'regressed' | 'fixed' | 'same' | 'new' | 'gone';

export type ComparedResult = { result: RunVerdict; reason: string | null; ms: number; value: number | null };

export type ComparedCase = {
  name: string;
  change: CaseChange;
  a: ComparedResult | null;
  b: ComparedResult | null;
  /** b's ms minus a's; null unless in both. */
  ms_delta: number | null;
};

export type ComparedFigure = { name: string; a: number | null; b: number | null; delta: number | null };

export type Comparison = {
  a: RunView;
  b: RunView;
  cases: ComparedCase[];
  counts: Record<CaseChange, number>;
  figures: ComparedFigure[];
};

/** A case's time has moved when it moved by more than this share of a's time... */
export const MS_MOVED_RATIO = 0.25;
/** ...and by more than this many ms. */
export const MS_MOVED_MIN = 10;

/** The order changes are listed in. */
const CHANGE_ORDER: readonly CaseChange[] = ['regressed', 'fixed', 'new', 'gone', 'same'];

/** Summary fields that are no figure of the run (its box, its sequence numbers). */
const NOT_FIGURES = new Set(['module_id', 'control_seq']);

function compared(result: RunResultView): ComparedResult {
  return { result: result.result, reason: result.reason, ms: result.ms, value: result.value };
}

/** The results by name, the first of each name. */
function byName(results: readonly RunResultView[]): Map<string, RunResultView> {
  const map = new Map<string, RunResultView>();
  for (const result of results) if (!map.has(result.name)) map.set(result.name, result);
  return map;
}

function changeOf(a: RunResultView, b: RunResultView): CaseChange {
  if (b.result === 'fail' && a.result !== 'fail') return 'regressed';
  if (a.result === 'fail' && b.result !== 'fail') return 'fixed';
  return 'same';
}

function withoutResults(run: RunWithResults): RunView {
  const { results: _results, ...view } = run;
  return view;
}

function numberOf(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** The summaries' numeric fields, passed, failed and skipped first, then as a then b names them. */
function summaryComparedFigures(a: RunView, b: RunView): ComparedFigure[] {
  const names = new Set(['passed', 'failed', 'skipped']);
  for (const summary of [a.summary, b.summary])
    for (const [name, value] of Object.entries(summary ?? {}))
      if (!NOT_FIGURES.has(name) && typeof value === 'number') names.add(name);
  return [...names].map((name) => figure(name, numberOf(a.summary?.[name]), numberOf(b.summary?.[name])));
}

function figure(name: string, a: number | null, b: number | null): ComparedFigure {
  return { name, a, b, delta: a === null || b === null ? null : b - a };
}

function msMoved(a: number, b: number): boolean {
  const moved = Math.abs(b - a);
  return moved > MS_MOVED_MIN && moved > MS_MOVED_RATIO * a;
}

export function compareRuns(a: RunWithResults, b: RunWithResults): Comparison {
  const inA = byName(a.results);
  const inB = byName(b.results);
  const cases: ComparedCase[] = [];
  const caseComparedFigures: ComparedFigure[] = [];
  for (const [name, before] of inA) {
    const after = inB.get(name);
    if (after === undefined) {
      cases.push({ name, change: 'gone', a: compared(before), b: null, ms_delta: null });
      continue;
    }
    cases.push({
      name,
      change: changeOf(before, after),
      a: compared(before),
      b: compared(after),
      ms_delta: after.ms - before.ms,
    });
    if (msMoved(before.ms, after.ms)) caseComparedFigures.push(figure(`ms:${name}`, before.ms, after.ms));
    // A soak limit's measured figure (a conformance case has none: null in both).
    if (before.value !== after.value) caseComparedFigures.push(figure(`value:${name}`, before.value, after.value));
  }
  for (const [name, after] of inB)
    if (!inA.has(name)) cases.push({ name, change: 'new', a: null, b: compared(after), ms_delta: null });
  // A stable sort: a's order (then b's, for the new ones) within each change.
  cases.sort((x, y) => CHANGE_ORDER.indexOf(x.change) - CHANGE_ORDER.indexOf(y.change));
  const counts: Record<CaseChange, number> = { regressed: 0, fixed: 0, same: 0, new: 0, gone: 0 };
  for (const { change } of cases) counts[change]++;
  const runA = withoutResults(a);
  const runB = withoutResults(b);
  const figures = [
    figure('duration_ms', runA.duration_ms, runB.duration_ms),
    ...summaryComparedFigures(runA, runB),
  ].filter((item) => item.a !== item.b);
  return { a: runA, b: runB, cases, counts, figures: [...figures, ...caseComparedFigures] };
}
