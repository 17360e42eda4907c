// Kept runs: what the operator API, the bench page and the command line
// record, and what they read. Each change (a start, results, an end) is
// written first, then published as the run's newest state (with its
// results) on the operator event stream (`run`). A run that ends is
// followed by its box's retention (RUNS_KEPT_PER_BOX, RUNS_KEPT_DAYS); at
// start-up (`recover`) the runs no process runs any more are ended `error`
// and every box's retention applied. While the API runs, a sweep on the
// injected clock (`startQuietSweep`) ends the same way the command-line runs
// whose client went quiet for QUIET_RUN_MS.
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../lib/clock.js';
import { DeadlineSweep } from '../../lib/deadline-sweep.js';
import type { Logger } from '../../lib/logger.js';
import { messageOf } from '../../lib/message-of.js';
import type { ApiConfig } from '../config/index.js';
import type { Store } from '../db/store.js';
import type { EventPublisher } from '../events/types.js';
import { cursorPosition, encodeCursor } from '../http/cursor.js';
import { DomainError, notFound, refused } from '../http/domain-error.js';
import {
  isCommandLine,
  RunRepository,
  type NewResult,
  type OrphanScope,
  type RunEnding,
  type RunFilter,
} from './repository.js';
import { resultViewOf, runViewOf, type RunKind, type RunSource, type RunView, type RunWithResults } from './view.js';

/** A command-line run that has posted nothing for this long is taken for dead (at start-up and by the sweep). */
export const QUIET_RUN_MS = 24 * 3_600_000;

/** The longest the sweep of quiet command-line runs waits between two reads:
 * a run another process (or this one) started since is seen within it. */
export const QUIET_SWEEP_MAX_WAIT_MS = 3_600_000;

/** How long after a failed read or sweep (the database away) it is tried again. */
export const QUIET_SWEEP_RETRY_MS = 60_000;

/** The error of a run of the API left running that no process runs (found at start-up). */
export const INTERRUPTED_ERROR = 'interrupted: the API stopped';

/** The error of a command-line run quiet for QUIET_RUN_MS (found at start-up, or by the sweep). */
export const QUIET_ERROR = 'abandoned: the command line posted nothing for 24 h';

export interface RunsDeps {
  store: Store;
  /** The times of runs, and the sweep's timer. */
  clock: Clock;
  config: Pick<ApiConfig, 'runsKeptPerBox' | 'runsKeptDays'>;
  /** The stream's `run` events. */
  events: Pick<EventPublisher, 'publishRun'>;
  logger: Logger;
}

export interface RunStart {
  /** The run's id when its starter chose it (a conformance run of the API: its hold's holder); else a fresh one. */
  readonly id?: string;
  readonly moduleId: number;
  readonly kind: RunKind;
  readonly source: RunSource;
  readonly startedBy: string;
  readonly target: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly options?: Readonly<Record<string, unknown>>;
  /** ms; now when absent. */
  readonly startedMs?: number;
}

/** A run's end; `endedMs` now when absent. */
export type RunEnd = Omit<RunEnding, 'endedMs' | 'quietSince'> & { readonly endedMs?: number };

export type RunPage = {
  runs: RunView[];
  next_cursor: string | null;
};

export type RunQuery = Omit<RunFilter, 'after'> & { readonly cursor?: string };

/** A run with what its files are rendered from. */
export interface RunWithReport {
  readonly run: RunWithResults;
  /** The stored report JSON (a conformance SuiteReport without or with its results), null when none was given. */
  readonly report: unknown;
}

const CURSOR_PREFIX = 'run1.';

function cursorOf(run: RunView): string {
  return encodeCursor(CURSOR_PREFIX, `${Date.parse(run.started_at)}.${run.id}`);
}

/** The position inside a runs cursor, or undefined when it is none. */
export function decodeRunCursor(cursor: string): RunFilter['after'] {
  const position = cursorPosition(CURSOR_PREFIX, cursor);
  const match = position === undefined ? null : /^(0|[1-9]\d{0,15})\.([A-Za-z0-9_-]{1,64})$/.exec(position);
  if (match === null) return undefined;
  const startedMs = Number(match[1]);
  return Number.isSafeInteger(startedMs) ? { startedMs, id: match[2] as string } : undefined;
}

/** The refusal of a cursor this API did not make (422 naming `cursor`). */
function badCursor(): DomainError {
  return new DomainError('refused', 'is not a next_cursor of this API', {
    code: 'validation_failed',
    problems: [{ path: 'cursor', message: 'is not a next_cursor of this API' }],
  });
}

export class Runs {
  readonly #repository: RunRepository;
  readonly #quietSweep: DeadlineSweep;

  constructor(private readonly deps: RunsDeps) {
    this.#repository = new RunRepository(deps.store);
    this.#quietSweep = new DeadlineSweep({
      clock: deps.clock,
      soonest: async () => {
        const oldest = await this.#repository.oldestCommandLinePost();
        // Quiet for more than QUIET_RUN_MS: one millisecond past it.
        return oldest === undefined ? undefined : oldest + QUIET_RUN_MS + 1;
      },
      sweep: (nowMs) => this.endQuiet(nowMs),
      retryMs: QUIET_SWEEP_RETRY_MS,
      maxWaitMs: QUIET_SWEEP_MAX_WAIT_MS,
      onError: (error, during) => {
        this.deps.logger.warn(
          { err: messageOf(error) },
          `quiet command-line runs not ${during === 'read' ? 'read' : 'ended'}; tried again in a minute`,
        );
      },
    });
  }

  /** Starts the sweep that ends, while the API runs, the command-line runs
   * quiet for QUIET_RUN_MS (`endQuiet`), on the clock. */
  startQuietSweep(): void {
    this.#quietSweep.arm();
  }

  /** Stops the sweep, after the one under way. */
  close(): Promise<void> {
    return this.#quietSweep.close();
  }

  /** Starts a run of a box this database holds (404 naming the box otherwise). */
  async start(start: RunStart): Promise<RunWithResults> {
    if (!(await this.#repository.hasBox(start.moduleId))) throw notFound(`no box ${start.moduleId}`);
    const id = start.id ?? randomBytes(12).toString('base64url');
    await this.#repository.insert({
      id,
      moduleId: start.moduleId,
      kind: start.kind,
      source: start.source,
      startedBy: start.startedBy,
      target: start.target,
      labels: start.labels ?? {},
      options: start.options ?? {},
      startedMs: start.startedMs ?? this.deps.clock.now(),
    });
    return this.#changed(id);
  }

  /** Appends results to a running run; refuses one that has ended (409) or is gone (404). */
  async addResults(runId: string, results: readonly NewResult[]): Promise<RunWithResults> {
    if (!(await this.#repository.appendResults(runId, results, this.deps.clock.now())))
      throw await this.#notRunning(runId);
    return this.#changed(runId);
  }

  /** Ends a running run, then applies its box's retention; refuses one that has ended (409) or is gone (404). */
  async end(runId: string, end: RunEnd): Promise<RunWithResults> {
    const nowMs = this.deps.clock.now();
    if (!(await this.#repository.end(runId, { ...end, endedMs: end.endedMs ?? nowMs })))
      throw await this.#notRunning(runId);
    const run = await this.#changed(runId);
    await this.#prune(run.module_id, nowMs);
    return run;
  }

  /** The run with its results, or undefined. */
  async get(runId: string): Promise<RunWithResults | undefined> {
    const row = await this.#repository.find(runId);
    if (row === undefined) return undefined;
    const labels = (await this.#repository.labelsOf([runId])).get(runId) ?? {};
    const results = (await this.#repository.resultsOf(runId)).map(resultViewOf);
    return { ...runViewOf(row, labels, this.deps.clock.now()), results };
  }

  /** The run, refused (404 naming `id`) when there is none. */
  async found(runId: string): Promise<RunWithResults> {
    const run = await this.get(runId);
    if (run === undefined) throw notFound(`no run ${runId}`);
    return run;
  }

  /** The run of `operator` (who started it); another operator's is refused as if there were none. */
  async ownRun(runId: string, operator: string): Promise<RunWithResults> {
    const run = await this.get(runId);
    if (run?.started_by !== operator) throw notFound(`no run ${runId} of operator ${operator}`);
    return run;
  }

  /** The run and its stored report. */
  async withReport(runId: string): Promise<RunWithReport> {
    const run = await this.found(runId);
    const row = await this.#repository.find(runId);
    return { run, report: row?.report === null || row === undefined ? null : (JSON.parse(row.report) as unknown) };
  }

  /** A page of runs, newest first; a cursor this API did not make is refused (422 naming `cursor`). */
  async list(query: RunQuery): Promise<RunPage> {
    const { cursor, ...filter } = query;
    const after = cursor === undefined ? undefined : decodeRunCursor(cursor);
    if (cursor !== undefined && after === undefined) throw badCursor();
    const rows = await this.#repository.list({
      ...filter,
      ...(after === undefined ? {} : { after }),
      limit: filter.limit + 1,
    });
    const shown = rows.slice(0, filter.limit);
    const labels = await this.#repository.labelsOf(shown.map((row) => row.id));
    const nowMs = this.deps.clock.now();
    const runs = shown.map((row) => runViewOf(row, labels.get(row.id) ?? {}, nowMs));
    const last = runs.at(-1);
    return { runs, next_cursor: rows.length > filter.limit && last !== undefined ? cursorOf(last) : null };
  }

  /** At start-up: ends `error` the runs left running that no process runs
   * (repository.ts `orphans`), then applies every box's retention. */
  async recover(): Promise<void> {
    const nowMs = this.deps.clock.now();
    await this.endOrphans(nowMs);
    for (const moduleId of await this.#repository.boxes()) await this.#prune(moduleId, nowMs);
  }

  /** Ends `error` the runs left running that no process runs (of one box,
   * or all): a run of the API whose hold is gone, a command-line run quiet
   * for QUIET_RUN_MS. A run of the API that holds its box now calls it for
   * the box, so a run its predecessor left, whose hold has just passed, ends too. */
  async endOrphans(nowMs: number, moduleId?: number): Promise<void> {
    await this.#endLeftRunning(nowMs, moduleId === undefined ? {} : { moduleId });
  }

  /** Ends `error` the command-line runs (cli, ci) quiet for QUIET_RUN_MS:
   * the sweep's work while the API runs. The API's own runs (page, api) are
   * left to their holds. */
  async endQuiet(nowMs: number): Promise<void> {
    await this.#endLeftRunning(nowMs, { commandLineOnly: true });
  }

  /** Each run of `orphans` ended by one conditional UPDATE (still running,
   * and for a command-line run still quiet): of two processes ending it,
   * one does, and only that one publishes it. */
  async #endLeftRunning(nowMs: number, scope: OrphanScope): Promise<void> {
    for (const orphan of await this.#repository.orphans(nowMs, QUIET_RUN_MS, scope)) {
      const error = isCommandLine(orphan.source) ? QUIET_ERROR : INTERRUPTED_ERROR;
      const ended = await this.#repository.end(orphan.id, {
        state: 'error',
        error,
        summary: undefined,
        report: undefined,
        captures: undefined,
        endedMs: nowMs,
        ...(isCommandLine(orphan.source) ? { quietSince: nowMs - QUIET_RUN_MS } : {}),
      });
      if (ended) {
        this.deps.logger.info({ run_id: orphan.id, module_id: orphan.module_id }, `run left running ended: ${error}`);
        await this.#changed(orphan.id);
      }
    }
  }

  async #prune(moduleId: number, nowMs: number): Promise<void> {
    const { runsKeptPerBox, runsKeptDays } = this.deps.config;
    try {
      await this.#repository.prune(moduleId, nowMs, { perBox: runsKeptPerBox, days: runsKeptDays });
    } catch (error) {
      // The next end (or start-up) tries again; the run itself is kept.
      this.deps.logger.warn({ module_id: moduleId, err: messageOf(error) }, 'could not delete the runs past retention');
    }
  }

  async #notRunning(runId: string): Promise<DomainError> {
    const row = await this.#repository.find(runId);
    if (row === undefined) return notFound(`no run ${runId}`);
    return refused(`run ${runId} has ended (${row.state}): nothing more is recorded in it`);
  }

  /** The run's newest state, published. */
  async #changed(runId: string): Promise<RunWithResults> {
    const run = await this.found(runId);
    this.deps.events.publishRun(run);
    return run;
  }
}
