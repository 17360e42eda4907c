// The real-time clock of a simulated box: true time plus an offset, running
// fast or slow by a drift in parts per million, set by TIME_SET.
import type { Clock } from '../lib/clock.js';

export interface BoxClockSettings {
  /** How far the box clock is ahead of true time at start (negative: behind), ms. */
  readonly offsetMs?: number;
  /** How fast the box clock runs compared to true time, parts per million
   * (positive: it gains time). A cheap crystal is tens of ppm off. */
  readonly driftPpm?: number;
}

export class BoxClock {
  // Box time is anchored: at true time #anchorTrueMs the box read #anchorBoxMs,
  // and since then it has advanced at (1 + drift) times the true rate.
  #anchorTrueMs: number;
  #anchorBoxMs: number;
  #driftPpm: number;

  constructor(
    private readonly clock: Clock,
    settings: BoxClockSettings = {},
  ) {
    const offsetMs = settings.offsetMs ?? 0;
    this.#driftPpm = settings.driftPpm ?? 0;
    assertFinite('offset', offsetMs);
    assertFinite('drift', this.#driftPpm);
    this.#anchorTrueMs = clock.now();
    this.#anchorBoxMs = this.#anchorTrueMs + offsetMs;
  }

  /** Box time, ms since the epoch. */
  nowMs(): number {
    const elapsed = this.clock.now() - this.#anchorTrueMs;
    return this.#anchorBoxMs + elapsed * (1 + this.#driftPpm / 1e6);
  }

  /** Box time as the protocol carries it: whole Unix seconds in a u32. */
  nowSeconds(): number {
    return Math.min(0xffffffff, Math.max(0, Math.floor(this.nowMs() / 1000)));
  }

  /** How far the box is from true time now, ms (positive: ahead). */
  get offsetMs(): number {
    return this.nowMs() - this.clock.now();
  }

  get driftPpm(): number {
    return this.#driftPpm;
  }

  /** TIME_SET: the box clock reads `unixSeconds` from now on. */
  setSeconds(unixSeconds: number): void {
    assertFinite('time', unixSeconds);
    this.#anchorTrueMs = this.clock.now();
    this.#anchorBoxMs = unixSeconds * 1000;
  }

  /** Moves the box clock to `offsetMs` from true time (fault injection). */
  setOffset(offsetMs: number): void {
    assertFinite('offset', offsetMs);
    this.#anchorTrueMs = this.clock.now();
    this.#anchorBoxMs = this.#anchorTrueMs + offsetMs;
  }

  /** Changes the drift from now on; the time read so far stays. */
  setDrift(driftPpm: number): void {
    assertFinite('drift', driftPpm);
    const boxNow = this.nowMs();
    this.#anchorTrueMs = this.clock.now();
    this.#anchorBoxMs = boxNow;
    this.#driftPpm = driftPpm;
  }
}

function assertFinite(name: string, value: number): void {
  if (!Number.isFinite(value)) throw new RangeError(`box clock ${name} must be a finite number, got ${value}`);
}
