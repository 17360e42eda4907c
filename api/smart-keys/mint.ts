// Minting smart keys (docs/protocol.md, Command frame): the access command of
// the key's parking's mode, with scope = the parking, key_id = the smart
// key's id, the modules it may open, its window in Unix seconds, and its
// tries. A signed parking's keys carry an ACCESS_SIGNED signed with the
// parking's issuer private key (and remember which public key signed it); a
// sealed parking's an ACCESS sealed under K_park.
import { FrameKind, sealCommand, signAccessCommand, type AccessBody } from '../../firmware-protocol/index.js';
import type { Clock } from '../../lib/clock.js';
import type { Executor } from '../db/store.js';
import type { BoxRow } from '../boxes/index.js';
import type { ParkingRow } from '../parkings/index.js';
import {
  keyRowValues,
  type KeyPurpose,
  type NewSmartKey,
  type SmartKeyRepository,
  type SmartKeyRow,
} from './repository.js';
import { unixSeconds } from '../http/time.js';

/** What minting touches: the smart keys, and the clock for created_at. */
export interface MintDeps {
  smartKeys: Pick<SmartKeyRepository, 'insert' | 'setCommand'>;
  clock: Clock;
}

/** What a key's command needs of its parking. */
export type MintParking = Pick<
  ParkingRow,
  'id' | 'access_mode' | 'parking_key' | 'issuer_private_key' | 'issuer_public_key'
>;

export interface KeyRequest {
  /** The driver; null for an operator's key (then operatorId). */
  userId: number | null;
  parking: MintParking;
  sessionId: number | null;
  operatorId?: number;
  purpose: KeyPurpose;
  description: string;
  boxes: readonly Pick<BoxRow, 'module_id'>[];
  /** ms since the epoch, whole seconds. */
  startTime: number;
  endTime: number;
  maxEntries: number;
  maxExits: number;
}

function newKey(request: KeyRequest): NewSmartKey {
  return {
    userId: request.userId,
    parkingId: request.parking.id,
    sessionId: request.sessionId,
    ...(request.operatorId === undefined ? {} : { operatorId: request.operatorId }),
    description: request.description,
    purpose: request.purpose,
    moduleIds: request.boxes.map((box) => box.module_id),
    startTime: request.startTime,
    endTime: request.endTime,
  };
}

function body(request: KeyRequest): AccessBody {
  return {
    notBefore: unixSeconds(request.startTime),
    notAfter: unixSeconds(request.endTime),
    maxEntries: request.maxEntries,
    maxExits: request.maxExits,
    moduleIds: request.boxes.map((box) => box.module_id),
  };
}

/** Stores a key and its access command, inside the caller's transaction `on`
 * (the row is inserted first because the command carries its id); returns
 * the key as stored. */
export async function mintSmartKey(ctx: MintDeps, on: Executor, request: KeyRequest): Promise<SmartKeyRow> {
  const id = await ctx.smartKeys.insert(newKey(request), ctx.clock.now(), on);
  const { command, signedBy } = accessCommand(request.parking, id, body(request));
  return ctx.smartKeys.setCommand(id, command, signedBy, on);
}

/** The row mintSmartKey would store for `request`, its id `id` taken
 * already (PostgreSQL: from the sequence smart_key_ids), its command made
 * over that id; nothing stored: for a statement that inserts the key with
 * other rows (a session's creation on PostgreSQL,
 * api/sessions/creation-postgres.ts), in the order of KEY_ROW_COLUMNS. */
export function sealedKeyRow(request: KeyRequest, id: number, nowMs: number): ReturnType<typeof keyRowValues> {
  const { command, signedBy } = accessCommand(request.parking, id, body(request));
  return keyRowValues(id, newKey(request), command, signedBy, nowMs);
}

/** The access command of a parking's mode, and the issuer public key (hex)
 * that signed it, null when sealed. */
function accessCommand(
  parking: MintParking,
  keyId: number,
  body: AccessBody,
): { command: Buffer; signedBy: string | null } {
  if (parking.access_mode === 'signed') {
    // Smart keys are signed with the current pair; a pair being installed
    // (issuer_next_*) signs nothing until every box holds it.
    if (parking.issuer_private_key === null || parking.issuer_public_key === null)
      throw new Error(`signed parking ${parking.id} has no issuer key pair`);
    const command = signAccessCommand({
      privateKey: Buffer.from(parking.issuer_private_key, 'hex'),
      keyId,
      scope: parking.id,
      body,
    });
    return { command, signedBy: parking.issuer_public_key };
  }
  if (parking.parking_key === null) throw new Error(`sealed parking ${parking.id} has no parking key to seal with`);
  const command = sealCommand({
    kind: FrameKind.ACCESS,
    keyId,
    scope: parking.id,
    key: Buffer.from(parking.parking_key, 'hex'),
    body,
  });
  return { command, signedBy: null };
}
