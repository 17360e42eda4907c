// Tickets of the operator event stream (migration 13). A browser's
// EventSource cannot set headers, and the operator's long-lived token must
// stay out of URLs and log lines: the page asks for a ticket with its bearer
// token (POST /api/operator/events/tickets) and opens
// GET /api/operator/events?ticket=T. A ticket is 32 random bytes
// (base64url), good for one stream within TICKET_TTL_MS; only its SHA-256
// is stored, and taking it is one UPDATE (single use across processes).
import { randomBytes } from 'node:crypto';
import { tokenHash } from '../auth/secrets.js';
import type { Db } from '../db/open.js';

export const TICKET_TTL_MS = 30_000;
/** Used and expired tickets are deleted this long after they expired. */
const KEEP_EXPIRED_MS = 3_600_000;
/** base64url of 32 bytes, unpadded. */
export const TICKET_PATTERN = '^[A-Za-z0-9_-]{43}$';

export interface IssuedTicket {
  ticket: string;
  expiresAt: number;
}

export class EventTicketRepository {
  readonly #insert;
  readonly #take;
  readonly #prune;

  constructor(db: Db) {
    this.#insert = db.prepare<[Buffer, number, number, number]>(
      'INSERT INTO event_tickets (ticket_hash, operator_id, created_at, expires_at) VALUES (?, ?, ?, ?)',
    );
    this.#take = db.prepare<{ now: number; hash: Buffer }, { id: number; name: string }>(
      `UPDATE event_tickets SET used_at = @now
       WHERE ticket_hash = @hash AND used_at IS NULL AND expires_at > @now
       RETURNING operator_id AS id, (SELECT name FROM operators WHERE operators.id = operator_id) AS name`,
    );
    this.#prune = db.prepare<[number]>('DELETE FROM event_tickets WHERE expires_at < ?');
  }

  /** A fresh ticket for `operatorId`, valid until now + TICKET_TTL_MS. */
  issue(operatorId: number, nowMs: number): IssuedTicket {
    this.#prune.run(nowMs - KEEP_EXPIRED_MS);
    const ticket = randomBytes(32).toString('base64url');
    const expiresAt = nowMs + TICKET_TTL_MS;
    this.#insert.run(tokenHash(ticket), operatorId, nowMs, expiresAt);
    return { ticket, expiresAt };
  }

  /** Takes the ticket (once): its operator, or undefined when it is unknown, used or expired. */
  take(ticket: string, nowMs: number): { id: number; name: string } | undefined {
    return this.#take.get({ now: nowMs, hash: tokenHash(ticket) });
  }
}
