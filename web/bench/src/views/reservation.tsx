// Who holds a box and until when, its note, and whose turn is next (the
// box's `reservation` on the stream). While it is held the page cannot drive
// the box: the API refuses anyone without the holder's token, and the page
// has none, so the card's buttons that drive it are off and say why.
import { clockTime } from '../format';
import type { Reservation } from '../types';

/** Whether the reservation still holds the box at `nowMs` (it ends at expires_at unless renewed). */
export function holds(reservation: Reservation | null | undefined, nowMs: number): reservation is Reservation {
  if (reservation === null || reservation === undefined) return false;
  const expires = Date.parse(reservation.expires_at);
  return Number.isNaN(expires) || expires > nowMs;
}

/** "reserved by alice until 14:30:00 — CI job 123": the text and the title of the buttons it turns off. */
export function heldReason(reservation: Reservation): string {
  const note = reservation.note === null || reservation.note === '' ? '' : ` — ${reservation.note}`;
  return `reserved by ${reservation.holder} until ${clockTime(reservation.expires_at)}${note}`;
}

export function ReservationLine({ reservation }: { reservation: Reservation }) {
  const first = reservation.queue[0];
  return (
    <div
      class="reserved"
      data-reservation
      data-holder={reservation.holder}
      data-expires-at={reservation.expires_at}
      data-queue={reservation.queue.length}
    >
      <p class="reserved-reason" title={`since ${clockTime(reservation.since)}`}>
        {heldReason(reservation)}
      </p>
      {first !== undefined && (
        <p class="reserved-queue" data-next={first.holder}>
          next: {first.holder}
          {first.note !== null && first.note !== '' ? ` (${first.note})` : ''}
          {reservation.queue.length > 1 ? ` · ${reservation.queue.length} waiting` : ' · 1 waiting'}
        </p>
      )}
    </div>
  );
}
