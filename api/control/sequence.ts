// The control sequence of a box (docs/protocol.md, step 6 and the control
// sequence paragraph): one counter per box, shared by every control kind and
// every process that sends control commands. Allocated in ONE write
// (UPDATE ... RETURNING) on both engines: SQLite serialises writers, and
// PostgreSQL's second UPDATE of the row waits for the first to commit and
// then increments what it wrote; so two processes (or two connections)
// allocating at once never get the same number, which a read followed by a
// write could give them both.
import { sql } from 'kysely';
import { U32_MAX } from '../../firmware-protocol/index.js';
import { greatest, type Dialect, type Executor, type Store } from '../db/store.js';

/** Largest control sequence: key_id is a u32. */
export const MAX_CONTROL_SEQ = U32_MAX;

export class ControlSequences {
  readonly #kysely;
  readonly #dialect: Dialect;

  constructor(store: Store) {
    this.#kysely = store.kysely;
    this.#dialect = store.dialect;
  }

  /** The next sequence of the box, taken for good; undefined when the box is
   * unknown or its sequences are used up (u32). */
  async next(moduleId: number, on: Executor = this.#kysely): Promise<number | undefined> {
    const row = await on
      .updateTable('boxes')
      .set((eb) => ({ next_control_seq: eb('next_control_seq', '+', 1) }))
      .where('module_id', '=', moduleId)
      .where('next_control_seq', '<=', MAX_CONTROL_SEQ)
      .returning(sql<number>`next_control_seq - 1`.as('seq'))
      .executeTakeFirst();
    return row?.seq;
  }

  /** Moves the box's next sequence to at least `next` (after a REPLAY, a conformance run). */
  async skipTo(moduleId: number, next: number, on: Executor = this.#kysely): Promise<void> {
    await on
      .updateTable('boxes')
      .set({
        next_control_seq: greatest<number>(this.#dialect, sql.ref('next_control_seq'), sql.val(skipTarget(next))),
      })
      .where('module_id', '=', moduleId)
      .execute();
  }
}

const skipTarget = (next: number): number => Math.min(next, MAX_CONTROL_SEQ + 1);
