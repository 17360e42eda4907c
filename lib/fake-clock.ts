// A Clock for tests: time stands still until the test moves it.
import type { Clock, TimerHandle } from './clock.js';

interface PendingTimer {
  readonly id: number;
  readonly dueAt: number;
  readonly callback: () => void;
}

export class FakeClock implements Clock {
  #now: number;
  #nextId = 1;
  #timers: PendingTimer[] = [];

  /** @param startMs the initial time, ms since the epoch (default 2026-01-01T00:00:00Z). */
  constructor(startMs: number = Date.UTC(2026, 0, 1)) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    const timer: PendingTimer = { id: this.#nextId++, dueAt: this.#now + Math.max(0, delayMs), callback };
    this.#timers.push(timer);
    return timer;
  }

  clearTimeout(handle: TimerHandle): void {
    this.#timers = this.#timers.filter((timer) => timer !== handle);
  }

  /** How many callbacks are waiting. */
  get pendingTimers(): number {
    return this.#timers.length;
  }

  /**
   * Moves time forward by `ms`, running every callback that falls due on the
   * way, in order of due time (then of scheduling). Each callback sees `now()`
   * at its own due time; callbacks scheduled meanwhile run too if they fall
   * inside the window.
   */
  advance(ms: number): void {
    if (ms < 0) throw new RangeError('a clock does not go back');
    const target = this.#now + ms;
    for (;;) {
      const next = this.#earliestDueBy(target);
      if (next === undefined) break;
      this.#timers = this.#timers.filter((timer) => timer !== next);
      this.#now = next.dueAt;
      next.callback();
    }
    this.#now = target;
  }

  /** Sets the time to `ms` since the epoch, running what falls due on the way. */
  advanceTo(ms: number): void {
    this.advance(ms - this.#now);
  }

  /**
   * Advances in steps, yielding to the event loop before and after each one
   * so promise continuations (I/O done, awaited sleeps) can run and schedule
   * their timers before time moves past them.
   */
  async advanceAsync(ms: number, stepMs = ms): Promise<void> {
    const target = this.#now + ms;
    await yieldToEventLoop();
    while (this.#now < target) {
      this.advance(Math.min(stepMs, target - this.#now));
      await yieldToEventLoop();
    }
  }

  #earliestDueBy(limit: number): PendingTimer | undefined {
    let earliest: PendingTimer | undefined;
    for (const timer of this.#timers) {
      if (timer.dueAt > limit) continue;
      if (
        earliest === undefined ||
        timer.dueAt < earliest.dueAt ||
        (timer.dueAt === earliest.dueAt && timer.id < earliest.id)
      ) {
        earliest = timer;
      }
    }
    return earliest;
  }
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
