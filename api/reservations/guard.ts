// The guard of the routes that drive a box (its commands, its simulated
// faults, a conformance run, a recorded run): while the box is held by a
// reservation, a request without the holder's token in Parkbench-Reservation
// is refused 409 box_reserved. A token of another operator, of another box,
// or not live counts as none. A box nobody holds passes; so does an unknown
// box (the route answers it 404 itself). Drivers' routes never call it.
import type { IncomingHttpHeaders } from 'node:http';
import type { Clock } from '../../lib/clock.js';
import type { Store } from '../db/store.js';
import { boxReserved } from './refusal.js';
import { ReservationRows } from './repository.js';
import { hashReservationToken } from './tokens.js';

/** The header a holder sends its token in (node lowercases header names). */
export const RESERVATION_HEADER = 'parkbench-reservation';

export interface ReservationGuardDeps {
  readonly store: Store;
  readonly clock: Clock;
}

/** What the guard reads of a request: its headers and its operator. */
export interface GuardedRequest {
  readonly headers: IncomingHttpHeaders;
  readonly operator: { readonly id: number } | null;
}

/** The Parkbench-Reservation header's token, if one was sent. */
export function reservationTokenOf(headers: IncomingHttpHeaders): string | undefined {
  const value = headers[RESERVATION_HEADER];
  const token = Array.isArray(value) ? value[0] : value;
  return token === undefined || token === '' ? undefined : token;
}

/** Refuses (DomainError box_reserved, on module_id) a request on a box
 * held by a reservation it does not carry the token of. */
export async function guardReservation(
  deps: ReservationGuardDeps,
  moduleId: number,
  request: GuardedRequest,
): Promise<void> {
  const held = await new ReservationRows(deps.store).liveHeldOf(moduleId, deps.clock.now());
  if (held === undefined) return;
  const token = reservationTokenOf(request.headers);
  if (
    token !== undefined &&
    request.operator !== null &&
    held.operator_id === request.operator.id &&
    held.token_hash === hashReservationToken(token)
  )
    return;
  throw boxReserved(held);
}

/** The 409 a guarded route describes in its response schema. */
export const BOX_RESERVED_409 =
  "box_reserved: the box is reserved by another holder, or the request does not carry the reservation's token in Parkbench-Reservation; the body names the holder, the note and expires_at.";
