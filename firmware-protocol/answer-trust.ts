// What a service may learn from a genuine answer (docs/protocol.md, What an
// answer proves). A response's tag proves that the box wrote it, and its AAD
// that it answers a frame with the command's nonce; it does not prove that
// the frame was authentic. The box echoes kind and key_id from any header
// that passed steps 1 and 2, so a frame of garbage with a chosen key_id gets
// a genuine AUTH_FAILED that echoes it. Only a status the box gives after
// step 4 (the tag or the signature verified) says the echoed header is one
// that a holder of the key wrote.
import { Status, isAccessKind, isControlKind } from './constants.js';

/** Statuses of a control kind that only come after step 4: step 6's REPLAY,
 * and what follows it (OK, REVOCATION_FULL). */
const CONTROL_AFTER_AUTHENTICATION: ReadonlySet<number> = new Set([Status.OK, Status.REPLAY, Status.REVOCATION_FULL]);

/** Statuses of an access kind that only come after step 4: steps 7 to 11
 * (WRONG_MODULE of an access kind is step 8; step 3 gives WRONG_PARKING). */
const ACCESS_AFTER_AUTHENTICATION: ReadonlySet<number> = new Set([
  Status.OK,
  Status.NOT_YET_VALID,
  Status.EXPIRED,
  Status.WRONG_MODULE,
  Status.REVOKED,
  Status.NO_TRIES_LEFT,
  Status.LOW_BATTERY,
  Status.BARRIER_FAULT,
]);

/**
 * Whether an answer's echoed kind and key_id are those of an authentic frame:
 * the box passed step 4 on it. A service learns a control sequence, settles
 * a command or moves a session only from such an answer. MALFORMED is never
 * one (step 5 gives it after step 4, steps 1 and 2 before: the answer cannot
 * tell which).
 */
export function echoIsAuthenticated(answer: { readonly kind: number; readonly status: number }): boolean {
  if (isControlKind(answer.kind)) return CONTROL_AFTER_AUTHENTICATION.has(answer.status);
  if (isAccessKind(answer.kind)) return ACCESS_AFTER_AUTHENTICATION.has(answer.status);
  return false;
}
