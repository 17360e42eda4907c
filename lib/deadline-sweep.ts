// A sweep of what falls due, on the injected clock: a timer set for the
// soonest deadline (read from wherever the deadlines are kept, a database
// most often), which sweeps what has fallen due, then reads the soonest
// again. `arm` reads it anew whenever the caller changed a deadline; a
// failed read or sweep is tried again `retryMs` later; with `maxWaitMs`,
// the timer never waits longer than that, so a deadline another process
// wrote is seen within it. The timer never keeps the process alive
// (`unrefTimer`), and `close` stops it, after the sweep under way.
import { unrefTimer, type Clock, type TimerHandle } from './clock.js';

export interface DeadlineSweepOptions {
  readonly clock: Clock;
  /** The soonest deadline (ms on the clock), or undefined when nothing is to fall due. */
  readonly soonest: () => Promise<number | undefined>;
  /** Handles what has fallen due by `nowMs`. */
  readonly sweep: (nowMs: number) => Promise<void>;
  /** How long after a failed read or sweep it is tried again, ms. */
  readonly retryMs: number;
  /** The longest the timer waits, ms; absent: until the soonest deadline (none: no timer). */
  readonly maxWaitMs?: number;
  /** A read (`soonest`) or a sweep failed; it is tried again `retryMs` later. */
  readonly onError: (error: unknown, during: 'read' | 'sweep') => void;
}

export class DeadlineSweep {
  readonly #options: DeadlineSweepOptions;
  #timer: TimerHandle | undefined;
  /** Each read of the soonest deadline; only the newest one sets the timer. */
  #reads = 0;
  #closed = false;
  /** The sweep under way, awaited by `close`. */
  #sweeping: Promise<void> | undefined;

  constructor(options: DeadlineSweepOptions) {
    this.#options = options;
  }

  /** Reads the soonest deadline and sets the timer for it (a deadline passed already: swept at once). */
  arm(): void {
    if (this.#closed) return;
    const read = ++this.#reads;
    this.#options
      .soonest()
      .then((soonest) => {
        if (this.#closed || read !== this.#reads) return;
        const now = this.#options.clock.now();
        if (soonest !== undefined && soonest <= now) {
          this.#clearTimer();
          void this.#sweep();
          return;
        }
        const { maxWaitMs } = this.#options;
        const wait = soonest === undefined ? maxWaitMs : Math.min(soonest - now, maxWaitMs ?? Infinity);
        this.#setTimer(wait, () => void this.#sweep());
      })
      .catch((error: unknown) => {
        if (this.#closed || read !== this.#reads) return;
        this.#options.onError(error, 'read');
        this.#setTimer(this.#options.retryMs, () => this.arm());
      });
  }

  /** Stops the timer; resolves once the sweep under way (if any) is over. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#clearTimer();
    await this.#sweeping;
  }

  async #sweep(): Promise<void> {
    this.#timer = undefined;
    if (this.#closed || this.#sweeping !== undefined) return;
    const sweeping = this.#options.sweep(this.#options.clock.now());
    this.#sweeping = sweeping.then(
      () => undefined,
      () => undefined,
    );
    try {
      await sweeping;
    } catch (error) {
      this.#options.onError(error, 'sweep');
      this.#setTimer(this.#options.retryMs, () => void this.#sweep());
      return;
    } finally {
      this.#sweeping = undefined;
    }
    this.arm();
  }

  /** Sets the timer (the one before cleared); `ms` undefined: none. */
  #setTimer(ms: number | undefined, callback: () => void): void {
    this.#clearTimer();
    if (ms === undefined || this.#closed) return;
    this.#timer = this.#options.clock.setTimeout(callback, Math.max(0, ms));
    unrefTimer(this.#timer);
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) this.#options.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
