// One-off commands an operator sends a box through the server
// (POST /api/operator/boxes/:module_id/commands):
// - battery_query: a BATTERY_QUERY; status: the same BATTERY_QUERY, its
//   answer read as the box's state (the protocol has no other status command:
//   every response carries the barrier, battery, box time and box_seq);
// - time_set: a TIME_SET with the service's time;
// - access: a one-off operator ACCESS (operator-access.ts).
// The control kinds (docs/protocol.md, Command frame) are sealed under the box
// key, key_id the box's next control sequence, taken for good in one write
// (control/sequence.ts) so no other sender reuses it. They are refused
// (conflict, naming the run) while a conformance run holds the box
// (control/holds.ts): the box would answer the run's next command REPLAY.
import type { Clock } from '../../lib/clock.js';
import { BoxHolds, ControlSequences, heldBy } from '../control/index.js';
import type { Store } from '../db/store.js';
import { notFound, refused } from '../http/domain-error.js';
import { FrameKind, sealCommand } from '../../firmware-protocol/index.js';
import { mintOperatorAccess } from '../smart-keys/index.js';

export const BOX_COMMANDS = ['battery_query', 'time_set', 'status', 'access'] as const;
export type BoxCommand = (typeof BOX_COMMANDS)[number];

export interface PreparedBoxCommand {
  frame: Buffer;
  /** The operator's smart key of an `access`; null for the control kinds. */
  smartKeyId: number | null;
}

/** The frame of `command` for the box, `operator` the one who sends it;
 * not_found for an unknown box, refused when its control sequences are used
 * up, conflict when a conformance run holds it (a control kind). */
export async function prepareBoxCommand(
  { store }: { store: Store },
  clock: Clock,
  moduleId: number,
  command: BoxCommand,
  operator: { id: number; name: string },
): Promise<PreparedBoxCommand> {
  if (command === 'access') {
    const access = await mintOperatorAccess(store, clock, moduleId, operator);
    return { frame: access.command, smartKeyId: access.smartKeyId };
  }
  return { frame: await controlFrame(store, moduleId, command, clock.now()), smartKeyId: null };
}

/** The sealed frame of a control kind for the box. The sequence is taken
 * first, then the hold is read, in one transaction: a run's reservation and
 * hold commit before it (and are seen: refused, the sequence given back) or
 * after it (its block starts above this sequence). */
async function controlFrame(
  store: Store,
  moduleId: number,
  command: Exclude<BoxCommand, 'access'>,
  nowMs: number,
): Promise<Buffer> {
  const sealed = await store.kysely.transaction().execute(async (trx) => {
    const box = await trx.selectFrom('boxes').select('box_key').where('module_id', '=', moduleId).executeTakeFirst();
    if (!box) throw notFound(`no box with module id ${moduleId}`);
    const seq = await new ControlSequences(store).next(moduleId, trx);
    const hold = await new BoxHolds(store).liveHoldOf(moduleId, nowMs, trx);
    if (hold !== undefined) throw heldBy(hold);
    return { seq, key: Buffer.from(box.box_key, 'hex') };
  });
  const { seq, key } = sealed;
  if (seq === undefined) throw refused(`box ${moduleId} has used every control sequence`);
  if (command === 'battery_query' || command === 'status')
    return sealCommand({ kind: FrameKind.BATTERY_QUERY, key, keyId: seq, scope: moduleId });
  return sealCommand({
    kind: FrameKind.TIME_SET,
    key,
    keyId: seq,
    scope: moduleId,
    body: { time: Math.floor(nowMs / 1000) },
  });
}
