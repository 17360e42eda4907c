// A box held by a conformance run (table box_holds): while its
// lease (held_until, ms on the injected clock) is ahead, the control
// dispatcher sends the box nothing and the operator's control commands are
// refused, in every API process, so the run's block of control sequences is
// the only one the box sees. The run renews the lease while it lasts and
// deletes the row when it ends; a process that dies leaves a lease that
// passes, and then the box is free again.
import { changed, type Executor, type Store } from '../db/store.js';
import { conflict, type DomainError } from '../http/domain-error.js';

export interface BoxHold {
  module_id: number;
  /** The conformance run that holds it (its id). */
  holder: string;
  held_until: number;
}

export class BoxHolds {
  readonly #kysely;

  constructor(store: Store) {
    this.#kysely = store.kysely;
  }

  /** The box's hold whose lease is ahead of `nowMs`, if any. */
  async liveHoldOf(moduleId: number, nowMs: number, on: Executor = this.#kysely): Promise<BoxHold | undefined> {
    return on
      .selectFrom('box_holds')
      .select(['module_id', 'holder', 'held_until'])
      .where('module_id', '=', moduleId)
      .where('held_until', '>', nowMs)
      .executeTakeFirst();
  }

  /** Holds the box for `holder` until `untilMs`, in the caller's transaction,
   * which must have written the box's row first (the run's sequence
   * reservation does): a second transaction on the box, in any process,
   * then waits for this one and reads its hold. Returns the live hold of
   * another holder instead, taking nothing; a passed lease is taken over. */
  async acquire(
    moduleId: number,
    holder: string,
    nowMs: number,
    untilMs: number,
    on: Executor,
  ): Promise<BoxHold | undefined> {
    const live = await this.liveHoldOf(moduleId, nowMs, on);
    if (live !== undefined) return live;
    await on.deleteFrom('box_holds').where('module_id', '=', moduleId).execute();
    await on
      .insertInto('box_holds')
      .values({ module_id: moduleId, holder, held_until: untilMs, created_at: nowMs })
      .execute();
    return undefined;
  }

  /** Moves the holder's lease to `untilMs`, only while it is still ahead of
   * `nowMs`: false when the hold was lost (its lease passed, so another
   * process may have sent the box a command meanwhile, or the row is gone). */
  async renew(moduleId: number, holder: string, nowMs: number, untilMs: number): Promise<boolean> {
    const result = await this.#kysely
      .updateTable('box_holds')
      .set({ held_until: untilMs })
      .where('module_id', '=', moduleId)
      .where('holder', '=', holder)
      .where('held_until', '>', nowMs)
      .executeTakeFirst();
    return changed(result) === 1;
  }

  /** Ends the holder's hold (nothing when another holds the box now). */
  async release(moduleId: number, holder: string, on: Executor = this.#kysely): Promise<void> {
    await on.deleteFrom('box_holds').where('module_id', '=', moduleId).where('holder', '=', holder).execute();
  }
}

/** The refusal of a control command to a held box: it names the run. */
export function heldBy(hold: BoxHold): DomainError {
  return conflict(
    `box ${hold.module_id} is held by conformance run ${hold.holder} (until ${new Date(hold.held_until).toISOString()}, renewed while it runs): no control command goes to it until the run ends or is cancelled`,
  );
}
