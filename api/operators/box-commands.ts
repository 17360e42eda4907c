// One-off control commands an operator sends a box through the server
// (POST /api/operator/boxes/:module_id/commands): BATTERY_QUERY, and
// TIME_SET with the service's time. Both are control kinds
// (docs/protocol.md, Command frame): sealed under the box key, key_id the
// box's next control sequence, taken for good in one write
// (control/sequence.ts) so no other sender reuses it.
import { ControlSequences } from '../control/sequence.js';
import type { Db } from '../db/open.js';
import { notFound, refused } from '../domain-error.js';
import { BoxRepository } from '../repositories/boxes.js';
import { FrameKind, sealCommand } from '../../firmware-protocol/index.js';

export const BOX_COMMANDS = ['battery_query', 'time_set'] as const;
export type BoxCommand = (typeof BOX_COMMANDS)[number];

/** The sealed frame of `command` for the box; refused when its control sequences are used up. */
export function boxCommandFrame(db: Db, moduleId: number, command: BoxCommand, nowMs: number): Buffer {
  const box = new BoxRepository(db).findByModuleId(moduleId);
  if (!box) throw notFound(`no box with module id ${moduleId}`);
  const seq = new ControlSequences(db).next(moduleId);
  if (seq === undefined) throw refused(`box ${moduleId} has used every control sequence`);
  const key = Buffer.from(box.box_key, 'hex');
  if (command === 'battery_query')
    return sealCommand({ kind: FrameKind.BATTERY_QUERY, key, keyId: seq, scope: moduleId });
  return sealCommand({
    kind: FrameKind.TIME_SET,
    key,
    keyId: seq,
    scope: moduleId,
    body: { time: Math.floor(nowMs / 1000) },
  });
}
