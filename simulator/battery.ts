// The battery of a simulated box: it drains a little at rest and more with
// each movement of the arm. The level is derived from the clock when asked,
// so an idle box costs no timer.
import type { Clock } from '../lib/clock.js';

export interface BatteryModel {
  /** Level at start, millivolts. */
  readonly initialMv: number;
  /** Drain while idle, millivolts per hour. */
  readonly restDrainMvPerHour: number;
  /** Drain per movement of the arm (up or down), millivolts. */
  readonly movementDrainMv: number;
}

export const defaultBatteryModel: BatteryModel = Object.freeze({
  initialMv: 3_900,
  restDrainMvPerHour: 0.5,
  movementDrainMv: 1,
});

const MS_PER_HOUR = 3_600_000;
/** The response field is a u16 (docs/protocol.md, Response frame, battery_mv). */
const MAX_MV = 0xffff;

export class Battery {
  #mvAtReference: number;
  #referenceMs: number;

  constructor(
    private readonly clock: Clock,
    private readonly model: BatteryModel = defaultBatteryModel,
  ) {
    for (const [name, value] of Object.entries(model)) {
      if (!Number.isFinite(value) || value < 0)
        throw new RangeError(`battery ${name} must be a non-negative number, got ${String(value)}`);
    }
    this.#mvAtReference = model.initialMv;
    this.#referenceMs = clock.now();
  }

  /** The level now, whole millivolts within the u16 of the response frame. */
  get millivolts(): number {
    const hours = (this.clock.now() - this.#referenceMs) / MS_PER_HOUR;
    return clampMv(this.#mvAtReference - hours * this.model.restDrainMvPerHour);
  }

  /** One movement of the arm. */
  drainMovement(): void {
    this.set(this.millivolts - this.model.movementDrainMv);
  }

  /** Sets the level (a fresh battery, or a fault injected by a test). */
  set(millivolts: number): void {
    if (!Number.isFinite(millivolts)) throw new RangeError(`battery level must be a number, got ${millivolts}`);
    this.#mvAtReference = clampMv(millivolts);
    this.#referenceMs = this.clock.now();
  }
}

function clampMv(mv: number): number {
  return Math.min(MAX_MV, Math.max(0, Math.round(mv)));
}
