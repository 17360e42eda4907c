// The barrier states the box has shown, in order, and a way to wait for one
// (docs/protocol.md, Response frame, offset 21: 0 CLOSED, 1 OPENING, 2 OPEN,
// 3 CLOSING, 4 FAULT). Waits use the injected clock, and end at once when
// the run is interrupted (interrupted.ts).
import type { Clock } from '../lib/clock.js';
import type { Barrier } from '../firmware-protocol/index.js';
import type { BarrierObservation } from './box-target.js';
import { untilInterrupted } from './interrupted.js';

export class BarrierWatch {
  readonly #observations: BarrierObservation[] = [];
  readonly #waiters = new Set<() => void>();

  /** `signal`: the run's; aborted, a wait rejects with SuiteInterrupted at once. */
  constructor(
    private readonly clock: Clock,
    private readonly signal?: AbortSignal,
  ) {}

  add(observation: BarrierObservation): void {
    this.#observations.push(observation);
    for (const wake of [...this.#waiters]) wake();
  }

  /** How many observations there are so far: a mark to look after. */
  get mark(): number {
    return this.#observations.length;
  }

  /** The last state seen, if any. */
  get latest(): Barrier | undefined {
    return this.#observations.at(-1)?.barrier;
  }

  /** Observations since `mark`. */
  since(mark: number): readonly BarrierObservation[] {
    return this.#observations.slice(mark);
  }

  /** Resolves with the index of the first observation at or after `from`
   * showing `barrier`, or null when none came within `timeoutMs`; rejects
   * with SuiteInterrupted when the run is interrupted first. */
  async waitFor(barrier: Barrier, from: number, timeoutMs: number): Promise<number | null> {
    const waiting = this.#wait(barrier, from, timeoutMs);
    try {
      return await untilInterrupted(waiting.result, this.signal);
    } finally {
      waiting.cancel();
    }
  }

  #wait(barrier: Barrier, from: number, timeoutMs: number): { result: Promise<number | null>; cancel: () => void } {
    const find = (): number =>
      this.#observations.findIndex((observation, index) => index >= from && observation.barrier === barrier);
    const found = find();
    if (found !== -1) return { result: Promise.resolve(found), cancel: () => undefined };
    let finish: (result: number | null) => void = () => undefined;
    const result = new Promise<number | null>((resolve) => {
      finish = (value: number | null): void => {
        this.#waiters.delete(check);
        this.clock.clearTimeout(timer);
        resolve(value);
      };
    });
    const check = (): void => {
      const index = find();
      if (index !== -1) finish(index);
    };
    const timer = this.clock.setTimeout(() => finish(null), timeoutMs);
    this.#waiters.add(check);
    return { result, cancel: () => finish(null) };
  }
}
