// Parking sessions (spec 2.5). Times in ms since the epoch; money in minor units.
// On the store (SQLite or PostgreSQL, async): the session service, its
// routes and the payment outcomes. The box-log ingestion core changes
// sessions through its own set-based IngestStore (api/box-logs/).
import type { Selectable } from 'kysely';
import type { Schema } from '../db/schema.js';
import type { RowLocks } from '../db/row-locks.js';
import { changed, CompiledOnce, type Executor, type Store } from '../db/store.js';

export type SessionRow = Selectable<Schema['parking_sessions']>;
export type SessionState = SessionRow['state'];

/** States of a session the driver still holds (GET .../current). */
export const OPEN_STATES: readonly SessionState[] = ['entering', 'active', 'exiting'];

export interface NewSession {
  userId: number;
  parkingId: number;
  startTime: number;
  endTime: number;
  tries: number;
  amountMinor: number;
  currency: string;
}

/** How a session ends: its state after, end time, final amount and (maybe fresh) exit tries. */
export interface SessionEnd {
  state: SessionState;
  endTime: number;
  amountMinor: number;
  exitTries: number;
}

export class SessionRepository {
  readonly #kysely;
  readonly #locks: RowLocks;
  // Per request (the driver's current session, a session read back): compiled once.
  readonly #byId;
  readonly #openOfUser;
  readonly #insert;

  constructor(store: Store) {
    this.#kysely = store.kysely;
    this.#locks = store;
    this.#byId = new CompiledOnce(this.#kysely.selectFrom('parking_sessions').selectAll().where('id', '=', 0));
    this.#openOfUser = new CompiledOnce(
      this.#kysely.selectFrom('parking_sessions').selectAll().where('user_id', '=', 0).where('state', '<>', 'finished'),
    );
    // Per creation, inside its transaction: compiled once, its values bound in newSessionValues' order.
    this.#insert = new CompiledOnce(
      this.#kysely
        .insertInto('parking_sessions')
        .values(newSessionValues(PLACEHOLDER_SESSION, 0))
        .onConflict((oc) => oc.doNothing())
        .returningAll(),
    );
  }

  async findById(id: number, on: Executor = this.#kysely): Promise<SessionRow | undefined> {
    return (await this.#byId.run(on, [id]))[0];
  }

  /** The session, its row locked until the transaction `on` ends (PostgreSQL;
   * SQLite's BEGIN IMMEDIATE holds the whole database already): what ends a
   * session and what records a payment's outcome both take it first. */
  async lock(id: number, on: Executor): Promise<SessionRow | undefined> {
    const query = on.selectFrom('parking_sessions').selectAll().where('id', '=', id);
    return this.#locks.lockForUpdate(query).executeTakeFirst();
  }

  async findOpenOfUser(userId: number, on: Executor = this.#kysely): Promise<SessionRow | undefined> {
    return (await this.#openOfUser.run(on, [userId, 'finished']))[0];
  }

  /** Inserts an `entering` session; undefined when the driver already has an
   * open one: the partial unique index (parking_sessions_one_open) is the
   * verdict on both engines, so this holds across processes. ON CONFLICT DO
   * NOTHING rather than catching the violation: on PostgreSQL a failed
   * statement would abort the caller's transaction. */
  async insert(session: NewSession, nowMs: number, on: Executor = this.#kysely): Promise<number | undefined> {
    return (await this.insertRow(session, nowMs, on))?.id;
  }

  /** insert, returning the session as stored. */
  async insertRow(session: NewSession, nowMs: number, on: Executor = this.#kysely): Promise<SessionRow | undefined> {
    return (await this.#insert.run(on, Object.values(newSessionValues(session, nowMs))))[0];
  }

  /** Ends an open session; false when it had ended already (a concurrent finalize or exit). */
  async end(id: number, end: SessionEnd, nowMs: number, on: Executor = this.#kysely): Promise<boolean> {
    const result = await on
      .updateTable('parking_sessions')
      .set({
        state: end.state,
        end_time: end.endTime,
        ended_at: nowMs,
        amount_minor: end.amountMinor,
        exit_remaining_tries: end.exitTries,
      })
      .where('id', '=', id)
      .where('ended_at', 'is', null)
      .executeTakeFirst();
    return changed(result) === 1;
  }

  /** exiting -> finished (every payment paid); false when it was not exiting. */
  async finish(id: number, on: Executor = this.#kysely): Promise<boolean> {
    const result = await on
      .updateTable('parking_sessions')
      .set({ state: 'finished' })
      .where('id', '=', id)
      .where('state', '=', 'exiting')
      .executeTakeFirst();
    return changed(result) === 1;
  }

  async setState(id: number, state: SessionState, on: Executor = this.#kysely): Promise<void> {
    await on.updateTable('parking_sessions').set({ state }).where('id', '=', id).execute();
  }

  async setTries(id: number, entrance: number, exit: number, on: Executor = this.#kysely): Promise<void> {
    await on
      .updateTable('parking_sessions')
      .set({ entrance_remaining_tries: entrance, exit_remaining_tries: exit })
      .where('id', '=', id)
      .execute();
  }
}

const PLACEHOLDER_SESSION: NewSession = {
  userId: 0,
  parkingId: 0,
  startTime: 0,
  endTime: 0,
  tries: 0,
  amountMinor: 0,
  currency: '',
};

/** The columns of a new session, in the order its compiled insert binds them
 * (and the order of NEW_SESSION_COLUMNS). */
export function newSessionValues(session: NewSession, nowMs: number) {
  return {
    user_id: session.userId,
    parking_id: session.parkingId,
    state: 'entering' as const,
    start_time: session.startTime,
    end_time: session.endTime,
    entrance_remaining_tries: session.tries,
    exit_remaining_tries: session.tries,
    amount_minor: session.amountMinor,
    currency: session.currency,
    created_at: nowMs,
  };
}

/** The columns newSessionValues gives, in its order: what a statement that
 * inserts a session itself lists (a creation on PostgreSQL, creation-postgres.ts). */
export const NEW_SESSION_COLUMNS: readonly string[] = Object.keys(newSessionValues(PLACEHOLDER_SESSION, 0));
