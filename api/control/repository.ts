// Durable control commands (schema version 9): what the service owes each box,
// in the order it must arrive. Written by admin commands (any process),
// delivered by the API's dispatcher, settled by the ingestion of the box's
// verified answer (in whichever process ingests it).
//
// Two classes over one table: ControlCommandRepository on the
// store (SQLite or PostgreSQL, async), for the dispatcher, the operation
// reports, the box status and the operations' transactions (a smart key
// revoked, a parking's issuer keys); ControlCommandsSqlite on SQLite's
// connection, synchronous, for the settle by a box's verified answer (the
// box-log ingestion's group commit).
import { sql, type Selectable } from 'kysely';
import type { ControlCommandsTable } from '../db/schema.js';
import { changed, type Executor, type Store } from '../db/store.js';

export type ControlKind = ControlCommandRow['kind'];
export type ControlPurpose = ControlCommandRow['purpose'];
export type ControlState = ControlCommandRow['state'];

/** REVOKE: entries; SET_ISSUER: public keys in hex (previous null: none). */
export type ControlBody =
  | { readonly entries: readonly { readonly key_id: number; readonly until: number }[] }
  | { readonly issuer_key: string; readonly issuer_key_previous: string | null };

export type ControlCommandRow = Selectable<ControlCommandsTable>;

export interface NewControlCommand {
  moduleId: number;
  kind: ControlKind;
  body: ControlBody;
  operation: string;
  purpose: ControlPurpose;
  parkingId: number;
  smartKeyId?: number;
  requestedBy: string;
}

export class ControlCommandRepository {
  readonly #kysely;

  constructor(store: Store) {
    this.#kysely = store.kysely;
  }

  /** Queues a command; nothing when the operation already has one for this box. */
  async insert(command: NewControlCommand, nowMs: number, on: Executor = this.#kysely): Promise<void> {
    await on
      .insertInto('control_commands')
      .values(newRow(command, nowMs))
      .onConflict((oc) => oc.columns(['operation', 'module_id']).doNothing())
      .execute();
  }

  async findById(id: number, on: Executor = this.#kysely): Promise<ControlCommandRow | undefined> {
    return on.selectFrom('control_commands').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async listOfOperation(operation: string): Promise<ControlCommandRow[]> {
    return this.#kysely
      .selectFrom('control_commands')
      .selectAll()
      .where('operation', '=', operation)
      .orderBy('module_id')
      .execute();
  }

  async hasOperation(operation: string): Promise<boolean> {
    const row = await this.#kysely
      .selectFrom('control_commands')
      .select(sql<number>`1`.as('one'))
      .where('operation', '=', operation)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** The first pending command of each box that has one, in id order: only
   * it may be sent (in order). A box held by a conformance run at `nowMs`
   * (box_holds) or by an operator's reservation (box_reservations, a held
   * row not passed) is left out: it gets nothing while the run or the
   * reservation lasts. */
  async pendingHeads(nowMs: number): Promise<ControlCommandRow[]> {
    return this.#kysely
      .selectFrom('control_commands as c')
      .innerJoin(
        (eb) =>
          eb
            .selectFrom('control_commands')
            .select((inner) => ['module_id', inner.fn.min('id').as('id')])
            .where('state', '=', 'pending')
            .groupBy('module_id')
            .as('head'),
        (join) => join.onRef('head.id', '=', 'c.id'),
      )
      .selectAll('c')
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('box_holds as h')
              .select('h.module_id')
              .whereRef('h.module_id', '=', 'c.module_id')
              .where('h.held_until', '>', nowMs),
          ),
        ),
      )
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('box_reservations as r')
              .select('r.module_id')
              .whereRef('r.module_id', '=', 'c.module_id')
              .where('r.state', '=', 'held')
              .where('r.expires_at', '>', nowMs),
          ),
        ),
      )
      .orderBy('c.id')
      .execute();
  }

  /** The first pending command of one box; none while a conformance run or a reservation holds it at `nowMs`. */
  async headOf(moduleId: number, nowMs: number): Promise<ControlCommandRow | undefined> {
    return this.#kysely
      .selectFrom('control_commands as c')
      .selectAll('c')
      .where('c.module_id', '=', moduleId)
      .where('c.state', '=', 'pending')
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('box_holds as h')
              .select('h.module_id')
              .where('h.module_id', '=', moduleId)
              .where('h.held_until', '>', nowMs),
          ),
        ),
      )
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('box_reservations as r')
              .select('r.module_id')
              .where('r.module_id', '=', moduleId)
              .where('r.state', '=', 'held')
              .where('r.expires_at', '>', nowMs),
          ),
        ),
      )
      .orderBy('c.id')
      .limit(1)
      .executeTakeFirst();
  }

  /** Whether a reservation holds the box at `nowMs` (a held row of
   * box_reservations not passed): the claim reads it after the sequence. */
  async reservedAt(moduleId: number, nowMs: number, on: Executor = this.#kysely): Promise<boolean> {
    const row = await on
      .selectFrom('box_reservations')
      .select('module_id')
      .where('module_id', '=', moduleId)
      .where('state', '=', 'held')
      .where('expires_at', '>', nowMs)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Marks a command sent with `controlSeq`, in flight until `untilMs`;
   * false when it is no longer pending, another dispatcher (any process)
   * has it in flight, or (unless `evenIfBackingOff`: its box was just seen
   * online) its next attempt is not due. One conditional UPDATE: of two
   * claims at once, on either engine, one changes the row and the other
   * finds it in flight; a claim from a read taken before the last send's
   * retryLater committed finds it backing off. */
  async claim(
    id: number,
    sent: { controlSeq: number; nonce: Buffer },
    nowMs: number,
    untilMs: number,
    options: { evenIfBackingOff: boolean },
    on: Executor = this.#kysely,
  ): Promise<boolean> {
    let update = on
      .updateTable('control_commands')
      .set((eb) => ({
        control_seq: sent.controlSeq,
        sent_nonce: sent.nonce.toString('hex'),
        attempts: eb('attempts', '+', 1),
        in_flight_until: untilMs,
        last_attempt_at: nowMs,
      }))
      .where('id', '=', id)
      .where('state', '=', 'pending')
      .where((eb) => eb.or([eb('in_flight_until', 'is', null), eb('in_flight_until', '<=', nowMs)]));
    if (!options.evenIfBackingOff) update = update.where('next_attempt_at', '<=', nowMs);
    return changed(await update.executeTakeFirst()) === 1;
  }

  /** Settles a command whatever its state (the dispatcher's own claim
   * transaction: a box out of sequences). */
  async settle(id: number, outcome: ControlOutcome, nowMs: number, on: Executor = this.#kysely): Promise<void> {
    await on.updateTable('control_commands').set(settledColumns(outcome, nowMs)).where('id', '=', id).execute();
  }

  /** Settles a command no dispatcher has sent yet (still pending, no
   * sequence taken: a conformance run's put-back it did itself); false,
   * nothing changed, otherwise. */
  async settleUnsent(
    id: number,
    outcome: ControlOutcome,
    nowMs: number,
    on: Executor = this.#kysely,
  ): Promise<boolean> {
    const result = await on
      .updateTable('control_commands')
      .set(settledColumns(outcome, nowMs))
      .where('id', '=', id)
      .where('state', '=', 'pending')
      .where('control_seq', 'is', null)
      .executeTakeFirst();
    return changed(result) === 1;
  }

  /** Settles the send with `controlSeq` still in flight; false (nothing
   * changed) when its answer settled it meanwhile or a later send (another
   * dispatcher, after the lease passed) holds it now. */
  async settleSent(id: number, controlSeq: number, outcome: ControlOutcome, nowMs: number): Promise<boolean> {
    const result = await this.#kysely
      .updateTable('control_commands')
      .set(settledColumns(outcome, nowMs))
      .where('id', '=', id)
      .where('state', '=', 'pending')
      .where('control_seq', '=', controlSeq)
      .where('in_flight_until', 'is not', null)
      .executeTakeFirst();
    return changed(result) === 1;
  }

  /** No (believable) answer to the send with `controlSeq`: tried again at
   * `nextAttemptAt`. Nothing when its answer settled it meanwhile, or when a
   * later send holds it (its control_seq is another): a dispatcher whose
   * lease passed and was taken over cannot undo the new holder's lease. */
  async retryLater(id: number, controlSeq: number, error: string, nextAttemptAt: number): Promise<boolean> {
    const result = await this.#kysely
      .updateTable('control_commands')
      .set({ last_error: error, next_attempt_at: nextAttemptAt, in_flight_until: null })
      .where('id', '=', id)
      .where('state', '=', 'pending')
      .where('control_seq', '=', controlSeq)
      .where('in_flight_until', 'is not', null)
      .executeTakeFirst();
    return changed(result) === 1;
  }

  /** Commands of the operation not done yet (pending or failed). */
  async unfinished(operation: string): Promise<number> {
    const row = await this.#kysely
      .selectFrom('control_commands')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('operation', '=', operation)
      .where('state', '!=', 'done')
      .executeTakeFirst();
    return row?.count ?? 0;
  }
}

/** What settling a command writes. */
export interface ControlOutcome {
  state: ControlState;
  status: string | null;
  error: string | null;
  nextAttemptAt: number;
  replays: number;
}

function newRow(command: NewControlCommand, nowMs: number) {
  return {
    module_id: command.moduleId,
    kind: command.kind,
    body: JSON.stringify(command.body),
    operation: command.operation,
    purpose: command.purpose,
    parking_id: command.parkingId,
    smart_key_id: command.smartKeyId ?? null,
    requested_by: command.requestedBy,
    next_attempt_at: nowMs,
    created_at: nowMs,
  };
}

function settledColumns(outcome: ControlOutcome, nowMs: number) {
  return {
    state: outcome.state,
    last_status: outcome.status,
    last_error: outcome.error,
    next_attempt_at: outcome.nextAttemptAt,
    replays: outcome.replays,
    in_flight_until: null,
    finished_at: outcome.state === 'pending' ? null : nowMs,
  };
}
