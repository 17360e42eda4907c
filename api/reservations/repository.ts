// The rows of box_reservations (api/db/migrations/023-reservations.ts): a
// box's held reservation and its first-come queue (the order of id). Each
// change runs in a write transaction that has locked the box's row first
// (`lockBox`): on PostgreSQL two transactions on one box, in any process,
// then run one after the other; on SQLite every write transaction is a
// BEGIN IMMEDIATE already (api/db/row-locks.ts).
//
// A row is live while its expires_at (ms) is ahead: a held one until its
// holder's ttl passes, a waiting one while its waiting request keeps it
// ahead. `settle` deletes what has passed and hands a free box to the first
// live waiter, so whoever touches the box first after an end (a release, an
// expiry noticed by a timer or a waiter's poll, in any process) moves the
// queue on.
import { changed, type Executor, type Store } from '../db/store.js';
import type { ReservationRow } from './view.js';

export interface NewReservationRow {
  module_id: number;
  token_hash: string;
  operator_id: number;
  holder: string;
  note: string | null;
  state: 'held' | 'waiting';
  ttl_ms: number;
  queued_at: number;
  held_since: number | null;
  expires_at: number;
}

/** What a settle changed on the box. */
export interface Settled {
  /** Held reservations that had passed (an expiry). */
  readonly expired: number;
  /** Waiting rows that had passed (a waiter gone without a word). */
  readonly abandoned: number;
  /** The waiter that got the box, if one did. */
  readonly promoted: ReservationRow | undefined;
}

export class ReservationRows {
  readonly #store: Store;

  constructor(store: Store) {
    this.#store = store;
  }

  /** Locks the box's row until the transaction ends (PostgreSQL; SQLite's
   * IMMEDIATE transaction holds the write lock already); false when there
   * is no such box. */
  async lockBox(moduleId: number, on: Executor): Promise<boolean> {
    const box = await this.#store
      .lockForUpdate(on.selectFrom('boxes').select('module_id').where('module_id', '=', moduleId))
      .executeTakeFirst();
    return box !== undefined;
  }

  async boxExists(moduleId: number, on: Executor = this.#store.kysely): Promise<boolean> {
    const box = await on.selectFrom('boxes').select('module_id').where('module_id', '=', moduleId).executeTakeFirst();
    return box !== undefined;
  }

  /** Deletes the box's rows that have passed, then, when no live held row
   * is left, makes the first live waiting row (lowest id) held from `nowMs`
   * for its ttl. The box's row must be locked (lockBox). */
  async settle(moduleId: number, nowMs: number, on: Executor): Promise<Settled> {
    const passed = await on
      .deleteFrom('box_reservations')
      .where('module_id', '=', moduleId)
      .where('expires_at', '<=', nowMs)
      .returning('state')
      .execute();
    const expired = passed.filter((row) => row.state === 'held').length;
    const abandoned = passed.length - expired;
    const live = await this.liveRowsOf(moduleId, nowMs, on);
    const first = live[0];
    if (first === undefined || live.some((row) => row.state === 'held'))
      return { expired, abandoned, promoted: undefined };
    const promoted = { ...first, state: 'held' as const, held_since: nowMs, expires_at: nowMs + first.ttl_ms };
    await on
      .updateTable('box_reservations')
      .set({ state: 'held', held_since: nowMs, expires_at: promoted.expires_at })
      .where('id', '=', first.id)
      .execute();
    return { expired, abandoned, promoted };
  }

  /** The box's live rows (expires_at ahead of `nowMs`), in id order: its held one and its queue. */
  async liveRowsOf(moduleId: number, nowMs: number, on: Executor = this.#store.kysely): Promise<ReservationRow[]> {
    return on
      .selectFrom('box_reservations')
      .selectAll()
      .where('module_id', '=', moduleId)
      .where('expires_at', '>', nowMs)
      .orderBy('id')
      .execute();
  }

  /** The live rows of these boxes (every box when absent), by box, each in id order. */
  async liveRowsOfBoxes(
    moduleIds: readonly number[] | undefined,
    nowMs: number,
    on: Executor = this.#store.kysely,
  ): Promise<Map<number, ReservationRow[]>> {
    const byBox = new Map<number, ReservationRow[]>();
    if (moduleIds?.length === 0) return byBox;
    let query = on.selectFrom('box_reservations').selectAll().where('expires_at', '>', nowMs);
    if (moduleIds !== undefined) query = query.where('module_id', 'in', [...moduleIds]);
    for (const row of await query.orderBy('module_id').orderBy('id').execute()) {
      let of = byBox.get(row.module_id);
      if (of === undefined) byBox.set(row.module_id, (of = []));
      of.push(row);
    }
    return byBox;
  }

  /** The box's live held row, if any. */
  async liveHeldOf(
    moduleId: number,
    nowMs: number,
    on: Executor = this.#store.kysely,
  ): Promise<ReservationRow | undefined> {
    return on
      .selectFrom('box_reservations')
      .selectAll()
      .where('module_id', '=', moduleId)
      .where('state', '=', 'held')
      .where('expires_at', '>', nowMs)
      .executeTakeFirst();
  }

  async byId(id: number, on: Executor = this.#store.kysely): Promise<ReservationRow | undefined> {
    return on.selectFrom('box_reservations').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The row of a token's hash, whatever its box, state or expiry. */
  async byTokenHash(hash: string, on: Executor = this.#store.kysely): Promise<ReservationRow | undefined> {
    return on.selectFrom('box_reservations').selectAll().where('token_hash', '=', hash).executeTakeFirst();
  }

  async insert(row: NewReservationRow, on: Executor): Promise<number> {
    const inserted = await on.insertInto('box_reservations').values(row).returning('id').executeTakeFirstOrThrow();
    return inserted.id;
  }

  async deleteById(id: number, on: Executor): Promise<boolean> {
    return changed(await on.deleteFrom('box_reservations').where('id', '=', id).executeTakeFirst()) === 1;
  }

  /** A held row's new ttl from `nowMs`, and its new note unless `note` is undefined. */
  async renew(id: number, nowMs: number, ttlMs: number, note: string | null | undefined, on: Executor): Promise<void> {
    await on
      .updateTable('box_reservations')
      .set({ ttl_ms: ttlMs, expires_at: nowMs + ttlMs, ...(note === undefined ? {} : { note }) })
      .where('id', '=', id)
      .where('state', '=', 'held')
      .execute();
  }

  /** A waiting row kept in the queue until `untilMs`; false when it waits no more (held, or gone). */
  async keepWaiting(id: number, untilMs: number, on: Executor): Promise<boolean> {
    const result = await on
      .updateTable('box_reservations')
      .set({ expires_at: untilMs })
      .where('id', '=', id)
      .where('state', '=', 'waiting')
      .executeTakeFirst();
    return changed(result) === 1;
  }

  /** The boxes with a held row that has passed at `nowMs` (an expiry to settle). */
  async boxesWithPassedHolds(nowMs: number): Promise<number[]> {
    const rows = await this.#store.kysely
      .selectFrom('box_reservations')
      .select('module_id')
      .where('state', '=', 'held')
      .where('expires_at', '<=', nowMs)
      .groupBy('module_id')
      .execute();
    return rows.map((row) => row.module_id);
  }

  /** The soonest expires_at of any held row, if any. */
  async soonestHeldExpiry(): Promise<number | undefined> {
    const row = await this.#store.kysely
      .selectFrom('box_reservations')
      .select((eb) => eb.fn.min<number | null>('expires_at').as('soonest'))
      .where('state', '=', 'held')
      .executeTakeFirst();
    return row?.soonest ?? undefined;
  }
}
