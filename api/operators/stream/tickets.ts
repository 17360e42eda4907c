// Tickets of the operator event stream (migration 13). A browser's
// EventSource cannot set headers, and the operator's long-lived token must
// stay out of URLs and log lines: the page asks for a ticket with its bearer
// token (POST /api/operator/events/tickets) and opens
// GET /api/operator/events?ticket=T. A ticket is 32 random bytes
// (base64url), good for one stream within TICKET_TTL_MS; only its SHA-256
// is stored, and taking it is one UPDATE (single use across processes: on
// PostgreSQL a second take waits on the first's row lock, then finds the
// ticket used).
import { randomBytes } from 'node:crypto';
import { tokenHash } from '../../auth/index.js';
import type { Store } from '../../db/store.js';

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
  constructor(private readonly store: Store) {}

  /** The operator's tickets not taken yet are void (its token was replaced:
   * they were asked for with the previous one). */
  async voidUnusedOf(operatorName: string): Promise<void> {
    await this.store.kysely
      .deleteFrom('event_tickets')
      .where('used_at', 'is', null)
      .where('operator_id', 'in', (eb) => eb.selectFrom('operators').select('id').where('name', '=', operatorName))
      .execute();
  }

  /** A fresh ticket for `operatorId`, valid until now + TICKET_TTL_MS. */
  async issue(operatorId: number, nowMs: number): Promise<IssuedTicket> {
    const { kysely } = this.store;
    await kysely
      .deleteFrom('event_tickets')
      .where('expires_at', '<', nowMs - KEEP_EXPIRED_MS)
      .execute();
    const ticket = randomBytes(32).toString('base64url');
    const expiresAt = nowMs + TICKET_TTL_MS;
    await kysely
      .insertInto('event_tickets')
      .values({ ticket_hash: tokenHash(ticket), operator_id: operatorId, created_at: nowMs, expires_at: expiresAt })
      .execute();
    return { ticket, expiresAt };
  }

  /** Takes the ticket (once): its operator, with the SHA-256 of the
   * operator's token now (the stream opened with it ends when that token is
   * replaced), or undefined when it is unknown, used or expired. */
  async take(ticket: string, nowMs: number): Promise<{ id: number; name: string; tokenHash: Buffer } | undefined> {
    const row = await this.store.kysely
      .updateTable('event_tickets')
      .set({ used_at: nowMs })
      .where('ticket_hash', '=', tokenHash(ticket))
      .where('used_at', 'is', null)
      .where('expires_at', '>', nowMs)
      .returning((eb) => [
        'operator_id as id',
        eb
          .selectFrom('operators')
          .select('operators.name')
          .whereRef('operators.id', '=', 'event_tickets.operator_id')
          .as('name'),
        eb
          .selectFrom('operators')
          .select('operators.token_hash')
          .whereRef('operators.id', '=', 'event_tickets.operator_id')
          .as('token_hash'),
      ])
      .executeTakeFirst();
    // The operator is deleted with its tickets (ON DELETE CASCADE): a ticket taken has one.
    if (row === undefined || row.name === null || row.token_hash === null) return undefined;
    return { id: row.id, name: row.name, tokenHash: row.token_hash };
  }
}
