// A box's reservation as the operator API shows it (GET and POST
// /api/operator/boxes/:module_id/reservation, the box's entry on the page):
// who holds it, until when, and who waits for it, first come first. Never a
// token. (Types, not interfaces: the routes' schema-derived types want their index signature.)
import type { Selectable } from 'kysely';
import type { BoxReservationsTable } from '../db/schema.js';

export type ReservationRow = Selectable<BoxReservationsTable>;

export type ReservationQueueEntry = {
  holder: string;
  note: string | null;
  /** When it joined the queue. */
  since: string;
};

export type ReservationView = {
  module_id: number;
  /** The operator who holds the box. */
  holder: string;
  note: string | null;
  /** When the holder got the box. */
  since: string;
  /** When the reservation ends unless renewed. */
  expires_at: string;
  /** The length of the reservation, as taken or last renewed. */
  ttl_seconds: number;
  /** Who waits for the box, first come first. */
  queue: ReservationQueueEntry[];
};

const iso = (ms: number): string => new Date(ms).toISOString();

/** The view of one box's live rows (its held one and its waiting ones, in
 * id order); null while nobody holds it. */
export function viewOf(rows: readonly ReservationRow[]): ReservationView | null {
  const held = rows.find((row) => row.state === 'held');
  if (held === undefined) return null;
  return {
    module_id: held.module_id,
    holder: held.holder,
    note: held.note,
    since: iso(held.held_since ?? held.queued_at),
    expires_at: iso(held.expires_at),
    ttl_seconds: Math.round(held.ttl_ms / 1000),
    queue: rows
      .filter((row) => row.state === 'waiting')
      .map((row) => ({ holder: row.holder, note: row.note, since: iso(row.queued_at) })),
  };
}

/** The view's JSON schema (the routes' answers, the box's entry). */
export const reservationViewSchema = {
  type: 'object',
  required: ['module_id', 'holder', 'note', 'since', 'expires_at', 'ttl_seconds', 'queue'],
  properties: {
    module_id: { type: 'integer' },
    holder: { type: 'string', description: 'The operator who holds the box.' },
    note: { type: ['string', 'null'], description: "The holder's note (a CI job, a person); null without one." },
    since: { type: 'string', description: 'When the holder got the box (ISO 8601).' },
    expires_at: {
      type: 'string',
      description: 'When the reservation ends unless its holder renews it (ISO 8601).',
    },
    ttl_seconds: { type: 'integer', description: 'Its length, as taken or last renewed.' },
    queue: {
      type: 'array',
      description: 'Who waits for the box, first come first: the first gets it at the release or the expiry.',
      items: {
        type: 'object',
        required: ['holder', 'note', 'since'],
        properties: {
          holder: { type: 'string' },
          note: { type: ['string', 'null'] },
          since: { type: 'string', description: 'When it joined the queue (ISO 8601).' },
        },
      },
    },
  },
} as const;
