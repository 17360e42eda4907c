// A one-off ACCESS an operator sends a box (POST /api/operator/boxes/:module_id/commands
// {"command": "access"}), recorded as such: a smart key of purpose `operator`
// (migration 13) naming the operator, for that one box, one try, valid for
// OPERATOR_ACCESS_WINDOW_MS from now. It is minted as a session's key is
// (sessions/smart-keys.ts: key_id = its id, scope = the parking, sealed under
// K_park or signed with the issuer key as the parking's mode says), so the
// box checks it by the same rules and its answer is stored as a box log of
// that key. It has no driver and no session: the box log's effects move
// nothing (box-logs/effects.ts), and a driver cannot claim it in an upload
// (box-logs/ingest.ts: not a smart key of fo_user_id).
import type { Clock } from '../../lib/clock.js';
import type { Store } from '../db/store.js';
import { notFound } from '../http/domain-error.js';
import { BoxRepository } from '../boxes/index.js';
import { ParkingRepository } from '../parkings/index.js';
import { SmartKeyRepository } from './repository.js';
import { mintSmartKey } from './mint.js';

/** Long enough for a box whose clock is a little off (the box allows its
 * skew_seconds besides), short enough that the key is dead once the operator
 * has seen the answer. */
export const OPERATOR_ACCESS_WINDOW_MS = 60_000;

export interface OperatorAccess {
  smartKeyId: number;
  /** The ACCESS or ACCESS_SIGNED frame to send. */
  command: Buffer;
}

/** Mints the operator's key for the box, in one transaction; not_found for a box this database does not hold. */
export async function mintOperatorAccess(
  store: Store,
  clock: Clock,
  moduleId: number,
  operator: { id: number; name: string },
): Promise<OperatorAccess> {
  const smartKeys = new SmartKeyRepository(store);
  return store.kysely.transaction().execute(async (on) => {
    const box = await new BoxRepository(store).findByModuleId(moduleId, on);
    if (!box) throw notFound(`no box with module id ${moduleId}`);
    const parking = await new ParkingRepository(store).findById(box.parking_id, on);
    if (!parking) throw new Error(`box ${moduleId} lacks its parking ${box.parking_id}`);
    // Whole seconds: the ACCESS frame carries seconds.
    const startTime = Math.floor(clock.now() / 1000) * 1000;
    const key = await mintSmartKey({ smartKeys, clock }, on, {
      userId: null,
      parking,
      sessionId: null,
      operatorId: operator.id,
      purpose: 'operator',
      description: `Operator ACCESS by operator ${operator.name} to box ${moduleId}`,
      boxes: [box],
      startTime,
      endTime: startTime + OPERATOR_ACCESS_WINDOW_MS,
      // One try, in the box's direction (the key lists this box only).
      maxEntries: 1,
      maxExits: 1,
    });
    return { smartKeyId: key.id, command: key.access_command };
  });
}
