// The control sequence of a box (docs/protocol.md, step 6 and the control
// sequence paragraph): one counter per box, shared by every control kind and
// every process that sends control commands. Allocated in ONE write
// (UPDATE ... RETURNING): SQLite serialises writers, so two processes (or two
// connections) allocating at once never get the same number, which a read
// followed by a write could give them both.
import { U32_MAX } from '../../firmware-protocol/index.js';
import type { Db } from '../db/open.js';

/** Largest control sequence: key_id is a u32. */
export const MAX_CONTROL_SEQ = U32_MAX;

export class ControlSequences {
  private readonly allocate;
  private readonly skip;

  constructor(db: Db) {
    this.allocate = db.prepare<[number, number], { seq: number }>(
      'UPDATE boxes SET next_control_seq = next_control_seq + 1 WHERE module_id = ? AND next_control_seq <= ? RETURNING next_control_seq - 1 AS seq',
    );
    this.skip = db.prepare<[number, number]>(
      'UPDATE boxes SET next_control_seq = max(next_control_seq, ?) WHERE module_id = ?',
    );
  }

  /** The next sequence of the box, taken for good; undefined when the box is
   * unknown or its sequences are used up (u32). */
  next(moduleId: number): number | undefined {
    return this.allocate.get(moduleId, MAX_CONTROL_SEQ)?.seq;
  }

  /** Moves the box's next sequence to at least `next` (after a REPLAY). */
  skipTo(moduleId: number, next: number): void {
    this.skip.run(Math.min(next, MAX_CONTROL_SEQ + 1), moduleId);
  }
}

/**
 * Where the sequence goes after the `replays`-th REPLAY (1, 2, 3) of
 * `refused`: the box accepted a higher sequence from another tool, by how
 * much is unknown. The conformance suite's default sequence is the Unix time
 * in seconds, so the first skip goes past now; later ones jump 2^24 and 2^28
 * past the refused one. The caller gives up after the third (bounded).
 */
export function sequenceAfterReplay(refused: number, replays: number, nowMs: number): number {
  if (replays <= 1) return Math.max(refused + 1_000, Math.floor(nowMs / 1000) + 1);
  return refused + (replays === 2 ? 2 ** 24 : 2 ** 28);
}

/** REPLAY answers taken before a command is failed. */
export const MAX_REPLAYS = 3;
