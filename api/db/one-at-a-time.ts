// One at a time, in order, each with a bounded wait: what stands in front of
// a database lock so that a burst of requests holds one pool connection at
// the lock per process, not one per request (the pool stays free for the
// rest of the API), and no request waits longer than its bound: past it, it
// is refused as busy, as a lock not granted in time would be.
import type { Clock, TimerHandle } from '../../lib/clock.js';
import { DatabaseBusyError } from './busy.js';

interface Waiting {
  readonly start: () => void;
  readonly timer: TimerHandle;
}

export class OneAtATime {
  #running = false;
  readonly #waiting: Waiting[] = [];

  /** `maxWaitMs`: the longest a run may wait, in this queue and then at its lock (the `remainingMs` it is given). */
  constructor(
    private readonly clock: Clock,
    private readonly maxWaitMs: number,
    private readonly what: string,
  ) {}

  /** Runs `work` once the runs before it have ended, with the ms left of the
   * wait bound (for its own lock wait); rejects with DatabaseBusyError, never
   * running it, when the bound passes first. */
  run<T>(work: (remainingMs: number) => Promise<T>): Promise<T> {
    const queuedAt = this.clock.now();
    return new Promise<T>((resolve, reject) => {
      const start = (): void => {
        this.#running = true;
        const remainingMs = Math.max(0, this.maxWaitMs - (this.clock.now() - queuedAt));
        void work(remainingMs)
          .then(resolve, reject)
          .finally(() => this.#next());
      };
      if (!this.#running) {
        start();
        return;
      }
      const entry: Waiting = {
        start,
        timer: this.clock.setTimeout(() => {
          const index = this.#waiting.indexOf(entry);
          if (index < 0) return;
          this.#waiting.splice(index, 1);
          reject(new DatabaseBusyError(`${this.what}: waited ${this.maxWaitMs} ms for the ones before it`));
        }, this.maxWaitMs),
      };
      this.#waiting.push(entry);
    });
  }

  /** Runs waiting now (the one running not counted). */
  get waiting(): number {
    return this.#waiting.length;
  }

  #next(): void {
    this.#running = false;
    const entry = this.#waiting.shift();
    if (entry === undefined) return;
    this.clock.clearTimeout(entry.timer);
    entry.start();
  }
}
