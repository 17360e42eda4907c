// The box's configuration, persisted state and conditions, as `decide` and
// `statusReport` take them (docs/protocol.md, Provisioning file; steps 1..11).
import type { Barrier } from './constants.js';
import { DEFAULT_SKEW_SECONDS, Direction, REVOCATION_LIST_CAPACITY } from './constants.js';

export type BoxDirection = 'entrance' | 'exit';

/** What a box is provisioned with (docs/protocol.md, Provisioning file). The
 * issuer keys are not here: they live in BoxState, since SET_ISSUER replaces
 * them and "the box's own state wins over the file once it has one". */
export interface BoxConfig {
  readonly moduleId: number;
  readonly parkingId: number;
  readonly direction: BoxDirection;
  /** K_park, 16 bytes; null on a box of a signed parking (docs/protocol.md, Keys:
   * "a box that holds no K_park answers every ACCESS AUTH_FAILED"). */
  readonly parkingKey: Uint8Array | null;
  /** The next K_park during a rotation, tried after parkingKey; null if none. */
  readonly parkingKeyNext: Uint8Array | null;
  /** K_box, 16 bytes. */
  readonly boxKey: Uint8Array;
  /** Clock tolerance in seconds, default 120 (docs/protocol.md, step 7). */
  readonly skewSeconds?: number;
  /** Below this battery level the barrier is not moved (step 10). */
  readonly minBatteryMv: number;
  /** Entries the revocation list holds, default 64 (docs/protocol.md, after step 11: "at
   * least 64 entries (the simulator: exactly 64)"). */
  readonly revocationCapacity?: number;
}

/** Tries counted for one key_id in this box's direction (step 9), with the
 * key's not_after so the entry can be forgotten once it has expired. */
export interface KeyTries {
  readonly count: number;
  readonly notAfter: number;
}

/** What survives a restart of the box (docs/protocol.md, the paragraph after
 * step 11: tries, box_seq, the last control sequence, the issuer keys and the
 * revocation list). */
export interface BoxState {
  /** The box_seq of the last response sent (0 before the first). */
  readonly boxSeq: number;
  /** The last control sequence accepted (0 before the first). */
  readonly lastControlSeq: number;
  readonly tries: ReadonlyMap<number, KeyTries>;
  /** `issuer_key`: 64 bytes X || Y, or null (then every ACCESS_SIGNED is AUTH_FAILED). */
  readonly issuerKey: Uint8Array | null;
  /** `issuer_key_previous`: 64 bytes X || Y, or null for none. */
  readonly issuerKeyPrevious: Uint8Array | null;
  /** The revocation list: key_id -> until (Unix seconds). */
  readonly revocations: ReadonlyMap<number, number>;
}

/** The box's clock, battery and barrier when a command arrives. */
export interface BoxConditions {
  /** Unix seconds, u32. */
  readonly boxTime: number;
  readonly batteryMv: number;
  readonly barrier: Barrier;
  /** The barrier would not move if asked to (step 11). */
  readonly jammed: boolean;
}

/** A new box's state: nothing counted, no revocations, and the issuer keys
 * of its provisioning file (docs/protocol.md, Provisioning file: "the public keys
 * the box starts with"), none by default. */
export function initialBoxState(
  issuers: { issuerKey?: Uint8Array | null; issuerKeyPrevious?: Uint8Array | null } = {},
): BoxState {
  return {
    boxSeq: 0,
    lastControlSeq: 0,
    tries: new Map(),
    issuerKey: issuers.issuerKey ?? null,
    issuerKeyPrevious: issuers.issuerKeyPrevious ?? null,
    revocations: new Map(),
  };
}

export function skewOf(config: BoxConfig): number {
  return config.skewSeconds ?? DEFAULT_SKEW_SECONDS;
}

export function revocationCapacityOf(config: BoxConfig): number {
  return config.revocationCapacity ?? REVOCATION_LIST_CAPACITY;
}

/** Response byte 22 for a non-control command (docs/protocol.md, Response frame). */
export function directionByte(direction: BoxDirection): Direction {
  return direction === 'entrance' ? Direction.ENTRANCE : Direction.EXIT;
}

/** docs/protocol.md, after step 11: "A box may forget the tries of a key
 * once its not_after + skew has passed". Returns the same state when nothing
 * is forgotten. `decide` never forgets on its own; the caller chooses when. */
export function forgetExpiredTries(config: BoxConfig, state: BoxState, boxTime: number): BoxState {
  const skew = skewOf(config);
  let kept: Map<number, KeyTries> | null = null;
  for (const [keyId, entry] of state.tries) {
    if (boxTime > entry.notAfter + skew) {
      kept ??= new Map(state.tries);
      kept.delete(keyId);
    }
  }
  return kept === null ? state : { ...state, tries: kept };
}
