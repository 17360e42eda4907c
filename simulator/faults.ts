// Faults and settings a simulated box takes on demand: from flags, from a
// fleet file, or at run time as JSON on `parkbench/boxes/{module_id}/sim/set`
// (parsed by lib/sim-set.ts, which the API shares). The endurance faults
// (a battery that sags with each opening, a barrier that jams now and then)
// come from flags only: they make a soak run's limits fail on demand.
import type { FaultSettings } from '../lib/sim-set.js';

export const noFaults: FaultSettings = Object.freeze({
  dropCommands: 0,
  corruptResponses: 0,
  delayMs: 0,
  jammed: false,
});

export interface EnduranceFaults {
  /** The battery drops by this much at each opening of the barrier, mV; 0: no sag. */
  readonly batteryDrainMv: number;
  /** Every n-th valid ACCESS the barrier jams for that one opening (it answers
   * BARRIER_FAULT); 0: never. */
  readonly jamEvery: number;
}

export const noEnduranceFaults: EnduranceFaults = Object.freeze({ batteryDrainMv: 0, jamEvery: 0 });

/** Checks endurance faults (the command line has checked its flags already). */
export function checkEnduranceFaults(faults: EnduranceFaults): EnduranceFaults {
  for (const [name, value] of Object.entries(faults)) {
    if (!Number.isSafeInteger(value) || value < 0)
      throw new RangeError(`${name} must be a whole number from 0, got ${String(value)}`);
  }
  return faults;
}

/** The faults in force, as the box's published state lists them. */
export function describeFaults(faults: FaultSettings, endurance: EnduranceFaults = noEnduranceFaults): string[] {
  const active: string[] = [];
  if (faults.dropCommands > 0) active.push(`drop_commands=${faults.dropCommands}`);
  if (faults.corruptResponses > 0) active.push(`corrupt_responses=${faults.corruptResponses}`);
  if (faults.delayMs > 0) active.push(`delay_ms=${faults.delayMs}`);
  if (faults.jammed) active.push('jam');
  if (endurance.batteryDrainMv > 0) active.push(`battery_drain_mv=${endurance.batteryDrainMv}`);
  if (endurance.jamEvery > 0) active.push(`jam_every=${endurance.jamEvery}`);
  return active;
}
