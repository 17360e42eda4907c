// Why a pending control command waits for its box (the control command
// view's `waiting`): an operator's reservation holds the box
// (box_reservations, a held row not passed), or a conformance run does
// (box_holds, its lease ahead). The dispatcher sends such a box nothing
// (dispatcher.ts); this says so, and until when at the latest.
import type { Executor } from '../db/store.js';
import { reservationSentence } from '../reservations/index.js';

export interface ControlWait {
  /** Who holds the box and why the command waits. */
  reason: string;
  /** When the hold ends unless renewed (ISO 8601). */
  until: string;
}

/** The wait of each of these boxes that one has at `nowMs`, by module id. */
export async function controlWaitsOf(
  on: Executor,
  moduleIds: readonly number[],
  nowMs: number,
): Promise<Map<number, ControlWait>> {
  const waits = new Map<number, ControlWait>();
  if (moduleIds.length === 0) return waits;
  const ids = [...new Set(moduleIds)];
  const holds = await on
    .selectFrom('box_holds')
    .select(['module_id', 'holder', 'held_until'])
    .where('module_id', 'in', ids)
    .where('held_until', '>', nowMs)
    .execute();
  for (const hold of holds)
    waits.set(hold.module_id, {
      reason: `box ${hold.module_id} is under conformance run ${hold.holder}: sent once the run ends`,
      until: new Date(hold.held_until).toISOString(),
    });
  const reservations = await on
    .selectFrom('box_reservations')
    .select(['module_id', 'holder', 'note', 'expires_at'])
    .where('module_id', 'in', ids)
    .where('state', '=', 'held')
    .where('expires_at', '>', nowMs)
    .execute();
  for (const held of reservations)
    waits.set(held.module_id, {
      reason: `${reservationSentence(held)}: sent after its release`,
      until: new Date(held.expires_at).toISOString(),
    });
  return waits;
}
