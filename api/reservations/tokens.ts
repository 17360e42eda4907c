// A reservation's token: 32 random bytes, base64url, shown once to the
// operator who took the box; the database keeps its SHA-256 (hex) only.
import { createHash, randomBytes } from 'node:crypto';

export interface ReservationToken {
  /** What the holder sends in Parkbench-Reservation. */
  readonly token: string;
  /** What box_reservations.token_hash keeps. */
  readonly hash: string;
}

export function newReservationToken(): ReservationToken {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: hashReservationToken(token) };
}

export function hashReservationToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
