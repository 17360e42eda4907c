// The box's configuration, persisted state and conditions, as `decide` and
// `statusReport` take them (PROTOCOL.md, provisioning file; checks).
import type { Barrier} from './constants.js';
import { DEFAULT_SKEW_SECONDS, Direction } from './constants.js';

export type BoxDirection = 'entrance' | 'exit';

/** What a box is provisioned with (PROTOCOL.md, provisioning file). */
export interface BoxConfig {
  readonly moduleId: number;
  readonly parkingId: number;
  readonly direction: BoxDirection;
  /** K_park, 16 bytes. */
  readonly parkingKey: Uint8Array;
  /** The next K_park during a rotation, tried after parkingKey; null if none. */
  readonly parkingKeyNext: Uint8Array | null;
  /** K_box, 16 bytes. */
  readonly boxKey: Uint8Array;
  /** Clock tolerance in seconds, default 120 (PROTOCOL.md, checks, step 7). */
  readonly skewSeconds?: number;
  /** Below this battery level the barrier is not moved (step 10). */
  readonly minBatteryMv: number;
}

/** Tries counted for one key_id in this box's direction (step 9), with the
 * key's not_after so the entry can be forgotten once it has expired. */
export interface KeyTries {
  readonly count: number;
  readonly notAfter: number;
}

/** What survives a restart of the box (PROTOCOL.md, checks, last paragraph). */
export interface BoxState {
  /** The box_seq of the last response sent (0 before the first). */
  readonly boxSeq: number;
  /** The last control sequence accepted (0 before the first). */
  readonly lastControlSeq: number;
  readonly tries: ReadonlyMap<number, KeyTries>;
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

export function initialBoxState(): BoxState {
  return { boxSeq: 0, lastControlSeq: 0, tries: new Map() };
}

export function skewOf(config: BoxConfig): number {
  return config.skewSeconds ?? DEFAULT_SKEW_SECONDS;
}

/** Response byte 22 for a non-control command (PROTOCOL.md, response frame). */
export function directionByte(direction: BoxDirection): Direction {
  return direction === 'entrance' ? Direction.ENTRANCE : Direction.EXIT;
}

/** PROTOCOL.md, checks, last paragraph: "A box may forget the tries of a key
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
