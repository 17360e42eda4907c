// Time as a dependency. Everything that waits, times out or ages (barrier
// motion, battery, box clocks, retries, token expiry) takes a Clock, so tests
// step a FakeClock instead of sleeping, and the simulator can run faster than
// real time (`--speed N`).

/** Opaque handle of a scheduled callback (whatever the clock returned). */
export type TimerHandle = object;

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Runs `callback` once, `delayMs` from now (in this clock's time). */
  setTimeout(callback: () => void, delayMs: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** Real time, real timers. Timers are unref'd only when asked (`unrefTimer`):
 * a pending barrier movement must keep a lone simulator process alive. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, delayMs) => setTimeout(callback, Math.max(0, delayMs)),
  clearTimeout: (handle) => {
    clearTimeout(handle as NodeJS.Timeout);
  },
};

/** Lets the process exit while the timer waits, when it is a real timer (a
 * fake clock's has nothing to let go). */
export function unrefTimer(handle: TimerHandle): void {
  const timer = handle as { unref?: unknown };
  if (typeof timer.unref === 'function') (timer.unref as () => void).call(handle);
}

/**
 * A clock that runs `speed` times faster than `base` from the moment it is
 * made: an hour of box life passes in a minute at speed 60. Its `now()` starts
 * at the base clock's now, so times stay plausible.
 */
export function scaledClock(speed: number, base: Clock = systemClock): Clock {
  if (!Number.isFinite(speed) || speed <= 0) {
    throw new RangeError(`speed must be a positive number, got ${speed}`);
  }
  if (speed === 1) return base;
  const origin = base.now();
  return {
    now: () => origin + (base.now() - origin) * speed,
    setTimeout: (callback, delayMs) => base.setTimeout(callback, delayMs / speed),
    clearTimeout: (handle) => {
      base.clearTimeout(handle);
    },
  };
}

/** Resolves after `delayMs` of `clock` time. */
export function sleep(clock: Clock, delayMs: number): Promise<void> {
  return new Promise((resolve) => {
    clock.setTimeout(resolve, delayMs);
  });
}
