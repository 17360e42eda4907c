// What an operator does about a control delivery that is stuck: retry it (a
// failed one goes back to the queue; a pending one goes out at the next
// poll, its backoff cut short) or skip it (given up: its operation goes on
// without it, and a rotation or set-access whose last delivery it was takes
// its step now). `admin control retry|skip` and the operator API's
// POST /api/operator/control_commands/{id}/retry|skip share this.
import { conflict, notFound } from '../http/domain-error.js';
import type { Executor, Store } from '../db/store.js';
import type { ControlCommandRow } from './repository.js';
import { completeOperationOn } from './settle.js';
import { type ControlWait, controlWaitsOf } from './waits.js';

export type Intervention = 'retry' | 'skip';

/** A control command as the operator sees it (ms times as ISO 8601). */
export interface ControlCommandView {
  id: number;
  module_id: number;
  kind: string;
  purpose: string;
  operation: string;
  state: ControlCommandRow['state'];
  attempts: number;
  control_seq: number | null;
  last_status: string | null;
  last_error: string | null;
  requested_by: string;
  created_at: string;
  finished_at: string | null;
  next_attempt_at: string;
  /** A pending command held back while its box is reserved or under a conformance run; null otherwise. */
  waiting: ControlWait | null;
}

export function controlCommandView(row: ControlCommandRow, wait: ControlWait | undefined): ControlCommandView {
  return {
    id: row.id,
    module_id: row.module_id,
    kind: row.kind,
    purpose: row.purpose,
    operation: row.operation,
    state: row.state,
    attempts: row.attempts,
    control_seq: row.control_seq,
    last_status: row.last_status,
    last_error: row.last_error,
    requested_by: row.requested_by,
    created_at: new Date(row.created_at).toISOString(),
    finished_at: row.finished_at === null ? null : new Date(row.finished_at).toISOString(),
    next_attempt_at: new Date(row.next_attempt_at).toISOString(),
    waiting: row.state === 'pending' ? (wait ?? null) : null,
  };
}

/** The views of these rows, each pending one with its box's wait at `nowMs`. */
async function viewsOf(on: Executor, rows: readonly ControlCommandRow[], nowMs: number): Promise<ControlCommandView[]> {
  const pending = rows.filter((row) => row.state === 'pending').map((row) => row.module_id);
  const waits = await controlWaitsOf(on, pending, nowMs);
  return rows.map((row) => controlCommandView(row, waits.get(row.module_id)));
}

/** The control commands, newest first, of a box and in a state when given;
 * at most `limit`; a pending one says what it waits for at `nowMs` (the
 * process's time when not given: the admin command line's). */
export async function listControlCommands(
  store: Store,
  filter: { moduleId?: number; state?: ControlCommandRow['state']; limit: number },
  nowMs: number = Date.now(),
): Promise<ControlCommandView[]> {
  let query = store.kysely.selectFrom('control_commands').selectAll();
  if (filter.moduleId !== undefined) query = query.where('module_id', '=', filter.moduleId);
  if (filter.state !== undefined) query = query.where('state', '=', filter.state);
  const rows = await query.orderBy('id', 'desc').limit(filter.limit).execute();
  return viewsOf(store.kysely, rows, nowMs);
}

/**
 * Retries or skips the command, in one transaction (its row locked on
 * PostgreSQL, so a box's answer settling it meanwhile is seen, not undone).
 * Refused: an unknown id (not_found); retry of a command done or skipped,
 * skip of one done (conflict).
 */
export async function intervene(
  store: Store,
  id: number,
  intervention: Intervention,
  nowMs: number,
  requestedBy: string,
): Promise<ControlCommandView> {
  return store.kysely.transaction().execute(async (trx) => {
    const row = await store
      .lockForUpdate(trx.selectFrom('control_commands').selectAll().where('id', '=', id))
      .executeTakeFirst();
    if (row === undefined) throw notFound(`no control command with id ${id}`);
    if (intervention === 'retry') await retry(trx, row, nowMs, requestedBy);
    else await skip(trx, store, row, nowMs, requestedBy);
    const changed = await trx.selectFrom('control_commands').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const [view] = await viewsOf(trx, [changed], nowMs);
    if (view === undefined) throw new Error(`control command ${id}: no view`);
    return view;
  });
}

async function retry(on: Executor, row: ControlCommandRow, nowMs: number, requestedBy: string): Promise<void> {
  if (row.state === 'done' || row.state === 'skipped')
    throw conflict(`control command ${row.id} is ${row.state}: nothing to retry`);
  // A failed command starts over (its REPLAY count too); a pending one keeps
  // its send in flight, if any, and goes out at the next poll after it.
  await on
    .updateTable('control_commands')
    .set({
      state: 'pending',
      replays: 0,
      next_attempt_at: nowMs,
      finished_at: null,
      last_error: `retried by ${requestedBy}${row.last_error === null ? '' : ` (was: ${row.last_error})`}`,
    })
    .where('id', '=', row.id)
    .execute();
}

async function skip(
  on: Executor,
  store: Store,
  row: ControlCommandRow,
  nowMs: number,
  requestedBy: string,
): Promise<void> {
  if (row.state === 'done') throw conflict(`control command ${row.id} is done: the box has it`);
  if (row.state === 'skipped') return;
  await on
    .updateTable('control_commands')
    .set({
      state: 'skipped',
      in_flight_until: null,
      finished_at: nowMs,
      last_error: `skipped by ${requestedBy}: box ${row.module_id} may not hold what the ${row.kind} carried`,
    })
    .where('id', '=', row.id)
    .execute();
  await completeOperationOn(on, store, { ...row, state: 'skipped' });
}
