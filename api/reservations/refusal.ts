// The refusal of a reserved box (409 box_reserved): its message names the
// holder, the note and the expiry, its detail is on module_id, and the body
// carries the holder, note and expires_at as fields of their own.
import { DomainError } from '../http/domain-error.js';
import type { ReservationRow } from './view.js';

/** One sentence on who holds the box and until when. */
export function reservationSentence(row: Pick<ReservationRow, 'module_id' | 'holder' | 'note' | 'expires_at'>): string {
  const note = row.note === null ? '' : ` (${row.note})`;
  return `box ${row.module_id} is reserved by ${row.holder}${note} until ${new Date(row.expires_at).toISOString()}`;
}

/** 409 box_reserved for the box `held` holds; `why` ends the sentence. */
export function boxReserved(
  held: Pick<ReservationRow, 'module_id' | 'holder' | 'note' | 'expires_at'>,
  why = 'send its token in Parkbench-Reservation, or wait for its release',
): DomainError {
  const message = `${reservationSentence(held)}: ${why}`;
  return new DomainError('conflict', message, {
    code: 'box_reserved',
    summary: `${message}.`,
    problems: [{ path: 'module_id', message }],
    fields: { holder: held.holder, note: held.note, expires_at: new Date(held.expires_at).toISOString() },
  });
}
