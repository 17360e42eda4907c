// A box's kept runs as the page reads them: pages of the history (GET
// /api/operator/runs), merged with what the stream's `run` events told since
// (a run from the command line shows up and counts its cases without a
// reload), and what a run row says of its cases.
import type { OperatorApi } from './operator-api';
import type { RunPage, RunView } from './types';

/** Runs a page of the history asks for. */
export const RUNS_PAGE = 20;

export function runsPage(api: OperatorApi, moduleId: number, cursor: string | null): Promise<RunPage> {
  const query = new URLSearchParams({ module_id: String(moduleId), limit: String(RUNS_PAGE) });
  if (cursor !== null) query.set('cursor', cursor);
  return api.get<RunPage>(`/runs?${query.toString()}`);
}

/** Newest first, as the API lists them: started_at, then id, descending. */
function newestFirst(x: RunView, y: RunView): number {
  if (x.started_at !== y.started_at) return x.started_at < y.started_at ? 1 : -1;
  return x.id < y.id ? 1 : x.id > y.id ? -1 : 0;
}

/**
 * The history shown: the pages loaded, each run replaced by what the stream
 * told of it later (a fetched run that ended is not put back to running),
 * plus the box's runs the stream told of that no page holds (new ones).
 */
export function mergedHistory(
  moduleId: number,
  loaded: readonly RunView[],
  live: ReadonlyMap<string, RunView>,
): RunView[] {
  const byId = new Map(loaded.map((run) => [run.id, run]));
  for (const run of live.values()) {
    if (run.module_id !== moduleId) continue;
    const known = byId.get(run.id);
    if (known !== undefined && known.state !== 'running' && run.state === 'running') continue;
    byId.set(run.id, run);
  }
  return [...byId.values()].sort(newestFirst);
}

function count(summary: Record<string, unknown> | null, name: string): number | null {
  const value = summary?.[name];
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** How many cases (or limits) a run has so far and how many failed: from its results when the stream sent them, else its summary. */
export function caseCounts(run: RunView): { total: number | null; failed: number | null; passed: number | null } {
  if (run.results !== undefined && (run.state === 'running' || run.summary === null)) {
    return {
      total: run.results.length,
      failed: run.results.filter((result) => result.result === 'fail').length,
      passed: run.results.filter((result) => result.result === 'pass').length,
    };
  }
  return {
    total: count(run.summary, 'total') ?? run.results?.length ?? null,
    failed: count(run.summary, 'failed'),
    passed: count(run.summary, 'passed'),
  };
}
