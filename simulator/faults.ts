// Faults and settings a simulated box takes on demand: from flags, from a
// fleet file, or at run time as JSON on `parkbench/boxes/{module_id}/sim/set`
// (parsed by lib/sim-set.ts, which the API shares).
import type { FaultSettings } from '../lib/sim-set.js';

export const noFaults: FaultSettings = Object.freeze({
  dropCommands: 0,
  corruptResponses: 0,
  delayMs: 0,
  jammed: false,
});

/** The faults in force, as the box's published state lists them. */
export function describeFaults(faults: FaultSettings): string[] {
  const active: string[] = [];
  if (faults.dropCommands > 0) active.push(`drop_commands=${faults.dropCommands}`);
  if (faults.corruptResponses > 0) active.push(`corrupt_responses=${faults.corruptResponses}`);
  if (faults.delayMs > 0) active.push(`delay_ms=${faults.delayMs}`);
  if (faults.jammed) active.push('jam');
  return active;
}
