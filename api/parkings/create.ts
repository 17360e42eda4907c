// Making a secured parking with its keys (docs/protocol.md, Keys): a signed
// parking (the default for new parkings) gets a fresh issuer key pair and no
// K_park; a sealed one (version 1 firmware) gets a fresh K_park and no issuer
// keys. The issuer's private key is stored and never returned: callers get
// what may be shown to an operator.
import { generateIssuerKeyPair } from '../../firmware-protocol/index.js';
import { randomKeyHex } from '../auth/index.js';
import type { Executor, Store } from '../db/store.js';
import { type AccessMode, type NewParking, type NewParkingKeys, ParkingRepository } from './repository.js';

/** A parking as the operator describes it; its keys are made here. */
export type ParkingInput = Omit<NewParking, 'keys'>;

/** What may be shown of a new parking's keys: never the issuer's private key. */
export interface CreatedParkingKeys {
  id: number;
  accessMode: AccessMode;
  /** K_park, 32 hex digits: sealed parkings only. */
  parkingKey: string | null;
  /** X || Y, 128 hex digits: signed parkings only. */
  issuerPublicKey: string | null;
}

/** Fresh keys of an access mode, from a CSPRNG. */
export function freshParkingKeys(accessMode: AccessMode): NewParkingKeys {
  if (accessMode === 'sealed') return { accessMode, parkingKey: randomKeyHex() };
  const pair = generateIssuerKeyPair();
  return {
    accessMode,
    issuerPrivateKey: pair.privateKey.toString('hex'),
    issuerPublicKey: pair.publicKey.toString('hex'),
  };
}

/** Inserts a parking with fresh keys of `accessMode`; call inside the caller's transaction if it has one. */
export async function createParking(
  store: Store,
  input: ParkingInput,
  accessMode: AccessMode,
  nowMs: number,
  on: Executor = store.kysely,
): Promise<CreatedParkingKeys> {
  const keys = freshParkingKeys(accessMode);
  const id = await new ParkingRepository(store).insert({ ...input, keys }, nowMs, on);
  return {
    id,
    accessMode,
    parkingKey: keys.accessMode === 'sealed' ? keys.parkingKey : null,
    issuerPublicKey: keys.accessMode === 'signed' ? keys.issuerPublicKey : null,
  };
}
