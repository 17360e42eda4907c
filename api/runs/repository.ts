// The kept runs in the database (tables runs, run_results, run_labels), the
// same on SQLite and PostgreSQL. A run's results are appended under a lock
// of its row (on PostgreSQL; SQLite's write transaction is alone anyway),
// so two posts to one run never take the same position. Times are ms on
// the service's clock.
import { sql, type ExpressionBuilder } from 'kysely';
import type { Schema } from '../db/schema.js';
import type { Executor, Store } from '../db/store.js';
import { changed } from '../db/store.js';
import type { RunKind, RunResultRow, RunRow, RunSource, RunState, RunVerdict } from './view.js';

export interface NewRun {
  readonly id: string;
  readonly moduleId: number;
  readonly kind: RunKind;
  readonly source: RunSource;
  readonly startedBy: string;
  readonly target: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly options: Readonly<Record<string, unknown>>;
  readonly startedMs: number;
}

export interface NewResult {
  readonly name: string;
  readonly result: RunVerdict;
  readonly reason: string | null;
  readonly ms: number;
  readonly value: number | null;
  readonly details: Readonly<Record<string, unknown>>;
}

export interface RunEnding {
  readonly state: Exclude<RunState, 'running'>;
  readonly error: string | null;
  readonly summary: unknown;
  /** What the run's files are rendered from (a conformance SuiteReport); undefined: none. */
  readonly report: unknown;
  /** undefined: the captures stay as they are. */
  readonly captures: readonly string[] | undefined;
  readonly endedMs: number;
  /** Ends it only when it has posted nothing since this time (ms): a run
   * taken for dead that has just posted stays running. */
  readonly quietSince?: number;
}

/** Which runs left running `orphans` looks at. */
export interface OrphanScope {
  /** Only this box's. */
  readonly moduleId?: number;
  /** Only the command line's (cli, ci): the API's runs (page, api) are not looked at. */
  readonly commandLineOnly?: boolean;
}

/** The sources of a run the command line records (its process posts to the API). */
const COMMAND_LINE_SOURCES: readonly RunSource[] = ['cli', 'ci'];

/** Whether the command line records a run of this source (its liveness: its posts). */
export function isCommandLine(source: RunSource): boolean {
  return COMMAND_LINE_SOURCES.includes(source);
}

export interface RunFilter {
  readonly moduleId?: number;
  /** Every one of these must be a label of the run. */
  readonly labels?: readonly (readonly [string, string])[];
  readonly state?: RunState;
  readonly kind?: RunKind;
  /** Only runs after this one in the order (started_at desc, id desc). */
  readonly after?: { readonly startedMs: number; readonly id: string };
  readonly limit: number;
}

/** How long runs are kept: the newest `perBox` of each box, and none that started more than `days` ago (0: any age). */
export interface Retention {
  readonly perBox: number;
  readonly days: number;
}

/** Ids deleted in one statement at most. */
const DELETE_AT_ONCE = 500;

const DAY_MS = 86_400_000;

export class RunRepository {
  constructor(private readonly store: Store) {}

  async insert(run: NewRun): Promise<void> {
    await this.store.kysely.transaction().execute(async (trx) => {
      await trx
        .insertInto('runs')
        .values({
          id: run.id,
          module_id: run.moduleId,
          kind: run.kind,
          source: run.source,
          started_by: run.startedBy,
          state: 'running',
          target: run.target,
          started_at: run.startedMs,
          ended_at: null,
          error: null,
          options: JSON.stringify(run.options),
          summary: null,
          report: null,
          updated_at: run.startedMs,
        })
        .execute();
      const labels = Object.entries(run.labels).map(([name, value]) => ({ run_id: run.id, name, value }));
      if (labels.length > 0) await trx.insertInto('run_labels').values(labels).execute();
    });
  }

  /** Appends the results after the run's last, in order; false when the run is not running (ended, or gone). */
  async appendResults(runId: string, results: readonly NewResult[], nowMs: number): Promise<boolean> {
    return this.store.kysely.transaction().execute(async (trx) => {
      const run = await this.store
        .lockForUpdate(trx.selectFrom('runs').select(['state']).where('id', '=', runId))
        .executeTakeFirst();
      if (run?.state !== 'running') return false;
      const last = await trx
        .selectFrom('run_results')
        .select(sql<number | null>`max(position)`.as('position'))
        .where('run_id', '=', runId)
        .executeTakeFirst();
      const position = last?.position ?? null;
      const first = position === null ? 0 : position + 1;
      if (results.length > 0)
        await trx
          .insertInto('run_results')
          .values(
            results.map((result, index) => ({
              run_id: runId,
              position: first + index,
              name: result.name,
              result: result.result,
              reason: result.reason,
              ms: result.ms,
              value: result.value,
              details: JSON.stringify(result.details),
            })),
          )
          .execute();
      await trx.updateTable('runs').set({ updated_at: nowMs }).where('id', '=', runId).execute();
      return true;
    });
  }

  /** Ends a running run; false when it was not running (ended already, or
   * gone) or, with `quietSince`, has posted since. One UPDATE with these
   * conditions: of two processes ending it, one does. */
  async end(runId: string, ending: RunEnding): Promise<boolean> {
    let query = this.store.kysely
      .updateTable('runs')
      .set({
        state: ending.state,
        ended_at: ending.endedMs,
        error: ending.error,
        summary: ending.summary === undefined ? null : JSON.stringify(ending.summary),
        report: ending.report === undefined ? null : JSON.stringify(ending.report),
        ...(ending.captures === undefined ? {} : { captures: JSON.stringify(ending.captures) }),
        updated_at: ending.endedMs,
      })
      .where('id', '=', runId)
      .where('state', '=', 'running');
    if (ending.quietSince !== undefined) query = query.where('updated_at', '<', ending.quietSince);
    return changed(await query.executeTakeFirst()) === 1;
  }

  async hasBox(moduleId: number): Promise<boolean> {
    const row = await this.store.kysely
      .selectFrom('boxes')
      .select('module_id')
      .where('module_id', '=', moduleId)
      .executeTakeFirst();
    return row !== undefined;
  }

  find(runId: string, on: Executor = this.store.kysely): Promise<RunRow | undefined> {
    return on.selectFrom('runs').selectAll().where('id', '=', runId).executeTakeFirst();
  }

  resultsOf(runId: string): Promise<RunResultRow[]> {
    return this.store.kysely
      .selectFrom('run_results')
      .selectAll()
      .where('run_id', '=', runId)
      .orderBy('position')
      .execute();
  }

  /** The labels of each of these runs (a run without any: absent). */
  async labelsOf(runIds: readonly string[]): Promise<Map<string, Record<string, string>>> {
    const labels = new Map<string, Record<string, string>>();
    if (runIds.length === 0) return labels;
    const rows = await this.store.kysely
      .selectFrom('run_labels')
      .select(['run_id', 'name', 'value'])
      .where('run_id', 'in', runIds)
      .orderBy('run_id')
      .orderBy('name')
      .execute();
    for (const row of rows) {
      const of = labels.get(row.run_id) ?? {};
      of[row.name] = row.value;
      labels.set(row.run_id, of);
    }
    return labels;
  }

  /** Runs newest first (started_at desc, id desc), filtered, at most `limit`. */
  list(filter: RunFilter): Promise<RunRow[]> {
    let query = this.store.kysely.selectFrom('runs').selectAll();
    if (filter.moduleId !== undefined) query = query.where('module_id', '=', filter.moduleId);
    if (filter.state !== undefined) query = query.where('state', '=', filter.state);
    if (filter.kind !== undefined) query = query.where('kind', '=', filter.kind);
    for (const [name, value] of filter.labels ?? [])
      query = query.where((eb) =>
        eb.exists(
          eb
            .selectFrom('run_labels as l')
            .select(sql.lit(1).as('one'))
            .whereRef('l.run_id', '=', 'runs.id')
            .where('l.name', '=', name)
            .where('l.value', '=', value),
        ),
      );
    const after = filter.after;
    if (after !== undefined)
      query = query.where((eb) =>
        eb.or([
          eb('started_at', '<', after.startedMs),
          eb.and([eb('started_at', '=', after.startedMs), eb('id', '<', after.id)]),
        ]),
      );
    return query.orderBy('started_at', 'desc').orderBy('id', 'desc').limit(filter.limit).execute();
  }

  /** The runs left `running` that no process runs any more: a run of the API
   * (page, api) whose hold on its box is gone or passed (the process that
   * ran it renewed it while it lived), and a run of the command line (cli,
   * ci) that has posted nothing for `quietMs`. */
  orphans(
    nowMs: number,
    quietMs: number,
    scope: OrphanScope = {},
  ): Promise<Pick<RunRow, 'id' | 'module_id' | 'source'>[]> {
    let query = this.store.kysely
      .selectFrom('runs')
      .select(['id', 'module_id', 'source'])
      .where('state', '=', 'running');
    if (scope.moduleId !== undefined) query = query.where('module_id', '=', scope.moduleId);
    const commandLineQuiet = (eb: ExpressionBuilder<Schema, 'runs'>) =>
      eb.and([eb('source', 'in', COMMAND_LINE_SOURCES), eb('updated_at', '<', nowMs - quietMs)]);
    if (scope.commandLineOnly === true) return query.where(commandLineQuiet).execute();
    return query
      .where((eb) =>
        eb.or([
          eb.and([
            eb('source', 'in', ['page', 'api']),
            eb.not(
              eb.exists(
                eb
                  .selectFrom('box_holds as h')
                  .select(sql.lit(1).as('one'))
                  .whereRef('h.holder', '=', 'runs.id')
                  .whereRef('h.module_id', '=', 'runs.module_id')
                  .where('h.held_until', '>', nowMs),
              ),
            ),
          ]),
          commandLineQuiet(eb),
        ]),
      )
      .execute();
  }

  /** The last post (updated_at) longest ago of a running command-line run, or undefined when none runs. */
  async oldestCommandLinePost(): Promise<number | undefined> {
    const row = await this.store.kysely
      .selectFrom('runs')
      .select((eb) => eb.fn.min<number | null>('updated_at').as('oldest'))
      .where('state', '=', 'running')
      .where('source', 'in', COMMAND_LINE_SOURCES)
      .executeTakeFirst();
    return row?.oldest ?? undefined;
  }

  /** The boxes that have runs. */
  async boxes(): Promise<number[]> {
    const rows = await this.store.kysely.selectFrom('runs').select('module_id').distinct().execute();
    return rows.map((row) => row.module_id);
  }

  /** Deletes the box's runs beyond the retention, never a running one; how many went. */
  async prune(moduleId: number, nowMs: number, retention: Retention): Promise<number> {
    const { kysely } = this.store;
    const beyondCount = await kysely
      .selectFrom('runs')
      .select('id')
      .where('module_id', '=', moduleId)
      .orderBy('started_at', 'desc')
      .orderBy('id', 'desc')
      .offset(retention.perBox)
      .limit(1_000_000_000)
      .execute();
    const ids = new Set(beyondCount.map((row) => row.id));
    if (retention.days > 0) {
      const old = await kysely
        .selectFrom('runs')
        .select('id')
        .where('module_id', '=', moduleId)
        .where('started_at', '<', nowMs - retention.days * DAY_MS)
        .execute();
      for (const row of old) ids.add(row.id);
    }
    const all = [...ids];
    let deleted = 0;
    for (let start = 0; start < all.length; start += DELETE_AT_ONCE) {
      const chunk = all.slice(start, start + DELETE_AT_ONCE);
      deleted += await kysely.transaction().execute(async (trx) => {
        // Only ended runs, read again under the transaction: one that is running stays.
        const ended = (
          await trx.selectFrom('runs').select('id').where('id', 'in', chunk).where('state', '!=', 'running').execute()
        ).map((row) => row.id);
        if (ended.length === 0) return 0;
        await trx.deleteFrom('run_results').where('run_id', 'in', ended).execute();
        await trx.deleteFrom('run_labels').where('run_id', 'in', ended).execute();
        return changed(await trx.deleteFrom('runs').where('id', 'in', ended).executeTakeFirst());
      });
    }
    return deleted;
  }
}
