// The barrier states the box reports during one cycle (status reports on
// serial and BLE, the retained state over MQTT), each with the monotonic
// time it arrived, and the waits for "up" and "down again". Only the
// current cycle's are kept: a run of millions of cycles holds a handful.
//
// A report shows the state when the box made it, so a barrier faster than
// its reports may be past OPEN when the report is made: the arm was up at
// the first report of OPEN or CLOSING, or of CLOSED after OPENING (a
// simulated barrier with timings of 0 shows OPENING, CLOSING, CLOSED or
// OPENING, OPEN, CLOSED). A real arm takes seconds and shows every state.
import { Barrier } from '../firmware-protocol/index.js';
import type { Clock } from '../lib/clock.js';
import type { BarrierObservation } from '../conformance/box-target.js';
import { untilInterrupted } from '../conformance/interrupted.js';

export interface SeenBarrier {
  readonly barrier: Barrier;
  /** Monotonic ms (the run's `monotonic`). */
  readonly at: number;
}

export interface Found {
  readonly index: number;
  readonly seen: SeenBarrier;
}

export class BarrierReports {
  #seen: SeenBarrier[] = [];
  #wake: (() => void) | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly monotonic: () => number,
    private readonly signal?: AbortSignal,
  ) {}

  /** A target's listener: a response's barrier byte is not a report, and not taken. */
  readonly add = (observation: BarrierObservation): void => {
    if (observation.source === 'response') return;
    this.#seen.push({ barrier: observation.barrier, at: this.monotonic() });
    this.#wake?.();
  };

  /** Forgets what came before: a new cycle begins. */
  reset(): void {
    this.#seen = [];
  }

  /** The first report showing the arm was up (OPEN, CLOSING, or CLOSED after OPENING). */
  waitForUp(timeoutMs: number): Promise<Found | null> {
    return this.#waitFor((seen, index) => {
      if (seen.barrier === Barrier.OPEN || seen.barrier === Barrier.CLOSING) return true;
      return (
        seen.barrier === Barrier.CLOSED && this.#seen.slice(0, index).some((each) => each.barrier === Barrier.OPENING)
      );
    }, timeoutMs);
  }

  /** The first report of CLOSED at `up` (a report of CLOSED that showed the arm had been up) or after it. */
  waitForDown(up: Found, timeoutMs: number): Promise<Found | null> {
    return this.#waitFor((seen, index) => index >= up.index && seen.barrier === Barrier.CLOSED, timeoutMs);
  }

  /** Null when no report matched within `timeoutMs`; rejects with
   * SuiteInterrupted when the run is interrupted. */
  async #waitFor(matches: (seen: SeenBarrier, index: number) => boolean, timeoutMs: number): Promise<Found | null> {
    const find = (): Found | null => {
      for (let index = 0; index < this.#seen.length; index++) {
        const seen = this.#seen[index];
        if (seen !== undefined && matches(seen, index)) return { index, seen };
      }
      return null;
    };
    const found = find();
    if (found !== null || timeoutMs <= 0) return found;
    let timer: ReturnType<Clock['setTimeout']> | undefined;
    const waiting = new Promise<Found | null>((resolve) => {
      this.#wake = () => {
        const now = find();
        if (now !== null) resolve(now);
      };
      timer = this.clock.setTimeout(() => resolve(null), timeoutMs);
    });
    try {
      return await untilInterrupted(waiting, this.signal);
    } finally {
      this.#wake = undefined;
      if (timer !== undefined) this.clock.clearTimeout(timer);
    }
  }
}
