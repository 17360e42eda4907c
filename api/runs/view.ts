// A kept run as the operator API answers it (GET /api/operator/runs and
// /runs/{id}, the stream's `run` event): its row, its labels and, read
// alone, its results. Types rather than interfaces, so that they fit the
// open object types the routes derive from their response schemas.
import type { Selectable } from 'kysely';
import type { RunResultsTable, RunsTable } from '../db/schema.js';

export type RunKind = RunsTable['kind'];
export type RunSource = RunsTable['source'];
export type RunState = RunsTable['state'];
export type RunVerdict = RunResultsTable['result'];

export const RUN_KINDS = ['conformance', 'soak'] as const satisfies readonly RunKind[];
export const RUN_SOURCES = ['page', 'api', 'cli', 'ci'] as const satisfies readonly RunSource[];
export const RUN_STATES = ['running', 'passed', 'failed', 'error'] as const satisfies readonly RunState[];
export const ENDED_STATES = ['passed', 'failed', 'error'] as const satisfies readonly RunState[];
export const RUN_VERDICTS = ['pass', 'fail', 'skip'] as const satisfies readonly RunVerdict[];

export type RunResultView = {
  name: string;
  result: RunVerdict;
  reason: string | null;
  ms: number;
  /** A soak limit's measured figure; null for a conformance case. */
  value: number | null;
  /** conformance: {step, expected, got, wearing}; soak: the limit's fields. */
  details: Record<string, unknown>;
};

export type RunView = {
  id: string;
  module_id: number;
  kind: RunKind;
  source: RunSource;
  started_by: string;
  state: RunState;
  target: string;
  labels: Record<string, string>;
  started_at: string;
  ended_at: string | null;
  /** To ended_at, or to now while it runs. */
  duration_ms: number;
  error: string | null;
  options: Record<string, unknown>;
  summary: Record<string, unknown> | null;
  captures: string[];
};

export type RunWithResults = RunView & { results: RunResultView[] };

export type RunRow = Selectable<RunsTable>;
export type RunResultRow = Selectable<RunResultsTable>;

/** A JSON object column, `{}` when it holds anything else. */
function objectOf(text: string | null): Record<string, unknown> {
  if (text === null) return {};
  const value: unknown = JSON.parse(text);
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export function runViewOf(row: RunRow, labels: Record<string, string>, nowMs: number): RunView {
  const captures: unknown = JSON.parse(row.captures);
  return {
    id: row.id,
    module_id: row.module_id,
    kind: row.kind,
    source: row.source,
    started_by: row.started_by,
    state: row.state,
    target: row.target,
    labels,
    started_at: new Date(row.started_at).toISOString(),
    ended_at: row.ended_at === null ? null : new Date(row.ended_at).toISOString(),
    duration_ms: Math.max(0, (row.ended_at ?? nowMs) - row.started_at),
    error: row.error,
    options: objectOf(row.options),
    summary: row.summary === null ? null : objectOf(row.summary),
    captures: Array.isArray(captures) ? captures.filter((path): path is string => typeof path === 'string') : [],
  };
}

export function resultViewOf(row: RunResultRow): RunResultView {
  return {
    name: row.name,
    result: row.result,
    reason: row.reason,
    ms: row.ms,
    value: row.value,
    details: objectOf(row.details),
  };
}
