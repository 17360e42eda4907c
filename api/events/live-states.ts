// The newest state each box published on MQTT (`{prefix}/boxes/{id}/state`,
// retained: simulated boxes publish it on every change, the gateway for real
// boxes from their responses). Kept in memory by the API process that hears
// it, shown as `live` in the operator API's box entries and pushed as
// `boxes` events. Strict: a payload that is not a state message (lib/
// mqtt-messages.ts parseStateMessage) is counted and dropped, the box keeps
// its previous state. An empty payload (a retained message cleared) forgets
// the box.
import { MessageError, parseStateMessage, type StateMessage } from '../../lib/mqtt-messages.js';

export type LiveState = StateMessage;

export interface LiveStateCounters {
  /** State messages taken. */
  accepted: number;
  /** Payloads that were no state message, by the field at fault (`json`: not a JSON object). */
  refused: Record<string, number>;
}

/** Boxes remembered at most (a gateway may publish for any module id). */
export const MAX_LIVE_BOXES = 100_000;

export class LiveBoxStates {
  readonly counters: LiveStateCounters = { accepted: 0, refused: {} };
  readonly #states = new Map<number, LiveState>();

  /** The newest state of a box, null when never seen. */
  of(moduleId: number): LiveState | null {
    return this.#states.get(moduleId) ?? null;
  }

  /** A state message arrived; true when the box's state changed. */
  message(moduleId: number, payload: Buffer | string): boolean {
    if (payload.length === 0) return this.#states.delete(moduleId);
    let state: StateMessage;
    try {
      state = parseStateMessage(payload);
    } catch (error) {
      if (!(error instanceof MessageError)) throw error;
      const field = error.field ?? 'json';
      this.counters.refused[field] = (this.counters.refused[field] ?? 0) + 1;
      return false;
    }
    const previous = this.#states.get(moduleId);
    if (previous === undefined && this.#states.size >= MAX_LIVE_BOXES) {
      this.counters.refused.too_many_boxes = (this.counters.refused.too_many_boxes ?? 0) + 1;
      return false;
    }
    this.counters.accepted++;
    this.#states.set(moduleId, state);
    return previous === undefined || !sameState(previous, state);
  }

  /** Every bad payload, whatever the field. */
  get refused(): number {
    return Object.values(this.counters.refused).reduce((sum, count) => sum + count, 0);
  }
}

function sameState(a: LiveState, b: LiveState): boolean {
  return (
    a.barrier === b.barrier &&
    a.battery_mv === b.battery_mv &&
    a.box_time === b.box_time &&
    a.box_seq === b.box_seq &&
    a.updated_at === b.updated_at &&
    a.faults.length === b.faults.length &&
    a.faults.every((fault, index) => fault === b.faults[index])
  );
}
