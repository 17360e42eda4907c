// The barrier of a simulated box: a state machine driven by an injected
// clock. CLOSED -> OPENING -> OPEN -> CLOSING -> CLOSED, FAULT when jammed.
import { EventEmitter } from 'node:events';
import type { Clock, TimerHandle } from '../lib/clock.js';

export type BarrierState = 'closed' | 'opening' | 'open' | 'closing' | 'fault';

export interface BarrierTimings {
  /** Time the arm takes to rise, ms. */
  readonly openingMs: number;
  /** Longest time the barrier stays open waiting for the car, ms. */
  readonly openHoldMs: number;
  /** Time the arm takes to come down, ms. */
  readonly closingMs: number;
}

export const defaultBarrierTimings: BarrierTimings = Object.freeze({
  openingMs: 2_000,
  openHoldMs: 10_000,
  closingMs: 2_000,
});

export interface BarrierEvents {
  /** Every change of state, with the state it left. */
  change: [state: BarrierState, previous: BarrierState];
  /** The arm started a movement (rising or falling): what drains the battery. */
  movement: [];
}

export class SimulatedBarrier extends EventEmitter<BarrierEvents> {
  #state: BarrierState = 'closed';
  #jammed = false;
  #timer: TimerHandle | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly timings: BarrierTimings = defaultBarrierTimings,
  ) {
    super();
    for (const [name, value] of Object.entries(timings)) {
      if (!Number.isFinite(value) || value < 0)
        throw new RangeError(`barrier ${name} must be a duration in ms, got ${String(value)}`);
    }
  }

  get state(): BarrierState {
    return this.#state;
  }

  get jammed(): boolean {
    return this.#jammed;
  }

  /**
   * Asks the barrier to open for a car. Returns false when the arm cannot
   * move (jammed): the barrier is then in FAULT. An open barrier keeps its
   * arm up and waits again for the car; a closing one rises again.
   */
  open(): boolean {
    if (this.#jammed) {
      this.#enter('fault');
      return false;
    }
    switch (this.#state) {
      case 'opening':
        return true;
      case 'open':
        this.#schedule(this.timings.openHoldMs, () => this.#startClosing());
        return true;
      case 'closed':
      case 'closing':
      case 'fault':
        this.#startOpening();
        return true;
    }
  }

  /** A car went through (the presence sensor cleared): the arm comes down. */
  carPassed(): void {
    if (this.#state === 'open') this.#startClosing();
  }

  /** Jams the arm (or frees it). A jam stops a movement in FAULT; freeing it
   * brings the arm down to CLOSED. */
  setJammed(jammed: boolean): void {
    this.#jammed = jammed;
    if (jammed && (this.#state === 'opening' || this.#state === 'closing')) {
      this.#cancelTimer();
      this.#enter('fault');
    } else if (!jammed && this.#state === 'fault') {
      this.#startClosing();
    }
  }

  /** The arm sticks on this one opening: FAULT, without staying jammed. It
   * stays in FAULT (status reports show it) until the next opening moves it. */
  jamOnce(): void {
    this.#cancelTimer();
    this.#enter('fault');
  }

  /** Stops pending movements (the box is shutting down). */
  dispose(): void {
    this.#cancelTimer();
    this.removeAllListeners();
  }

  #startOpening(): void {
    this.#enter('opening');
    this.emit('movement');
    this.#schedule(this.timings.openingMs, () => {
      this.#enter('open');
      this.#schedule(this.timings.openHoldMs, () => this.#startClosing());
    });
  }

  #startClosing(): void {
    this.#enter('closing');
    this.emit('movement');
    this.#schedule(this.timings.closingMs, () => this.#enter('closed'));
  }

  #schedule(delayMs: number, action: () => void): void {
    this.#cancelTimer();
    this.#timer = this.clock.setTimeout(() => {
      this.#timer = undefined;
      action();
    }, delayMs);
  }

  #cancelTimer(): void {
    if (this.#timer !== undefined) this.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #enter(state: BarrierState): void {
    const previous = this.#state;
    if (previous === state) return;
    this.#state = state;
    if (state === 'closed' || state === 'fault') this.#cancelTimer();
    this.emit('change', state, previous);
  }
}
