// Minting smart keys: an ACCESS frame sealed under the parking key
// (docs/protocol.md, Command frame): scope = the parking, key_id = the smart key's
// id, the modules it may open, its window in Unix seconds, and its tries.
import { FrameKind, sealCommand } from '../../firmware-protocol/index.js';
import type { AppContext } from '../context.js';
import type { BoxRow } from '../repositories/boxes.js';
import type { ParkingRow } from '../repositories/parkings.js';
import type { KeyPurpose } from '../repositories/smart-keys.js';
import { unixSeconds } from './time.js';

export interface KeyRequest {
  userId: number;
  parking: ParkingRow;
  sessionId: number;
  purpose: KeyPurpose;
  description: string;
  boxes: readonly BoxRow[];
  /** ms since the epoch, whole seconds. */
  startTime: number;
  endTime: number;
  maxEntries: number;
  maxExits: number;
}

/** Stores a key and its sealed command; call inside the caller's transaction
 * (the row is inserted first because the command seals its id). */
export function mintSmartKey(ctx: AppContext, request: KeyRequest): number {
  const moduleIds = request.boxes.map((box) => box.module_id);
  const id = ctx.smartKeys.insert(
    {
      userId: request.userId,
      parkingId: request.parking.id,
      sessionId: request.sessionId,
      description: request.description,
      purpose: request.purpose,
      moduleIds,
      startTime: request.startTime,
      endTime: request.endTime,
    },
    ctx.clock.now(),
  );
  if (request.parking.parking_key === null) throw new Error(`parking ${request.parking.id} has no parking key to seal with`);
  const command = sealCommand({
    kind: FrameKind.ACCESS,
    keyId: id,
    scope: request.parking.id,
    key: Buffer.from(request.parking.parking_key, 'hex'),
    body: {
      notBefore: unixSeconds(request.startTime),
      notAfter: unixSeconds(request.endTime),
      maxEntries: request.maxEntries,
      maxExits: request.maxExits,
      moduleIds,
    },
  });
  ctx.smartKeys.setCommand(id, command);
  return id;
}
