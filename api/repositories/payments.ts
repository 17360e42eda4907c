// Payments of parking sessions at a payment provider.
import type { Db } from '../db/open.js';

export type PaymentState = 'pending' | 'paid' | 'declined';
export type PaymentPurpose = 'session' | 'overstay';

export interface PaymentRow {
  id: number;
  session_id: number;
  provider: string;
  token: string;
  purpose: PaymentPurpose;
  amount_minor: number;
  currency: string;
  state: PaymentState;
}

export interface NewPayment {
  sessionId: number;
  provider: string;
  token: string;
  purpose: PaymentPurpose;
  amountMinor: number;
  currency: string;
}

export class PaymentRepository {
  private readonly byToken;
  private readonly byId;
  private readonly ofSession;
  private readonly insertRow;
  private readonly stateUpdate;

  constructor(db: Db) {
    const columns = 'id, session_id, provider, token, purpose, amount_minor, currency, state';
    this.byToken = db.prepare<[string], PaymentRow>(`SELECT ${columns} FROM payments WHERE token = ?`);
    this.byId = db.prepare<[number], PaymentRow>(`SELECT ${columns} FROM payments WHERE id = ?`);
    this.ofSession = db.prepare<[number], PaymentRow>(
      `SELECT ${columns} FROM payments WHERE session_id = ? ORDER BY id`,
    );
    this.insertRow = db.prepare<[number, string, string, PaymentPurpose, number, string, number, number]>(
      `INSERT INTO payments (session_id, provider, token, purpose, amount_minor, currency, state, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?)`,
    );
    // A paid payment never changes again.
    this.stateUpdate = db.prepare<[PaymentState, number, number]>(
      "UPDATE payments SET state = ?, updated_at = ? WHERE id = ? AND state <> 'paid'",
    );
  }

  findByToken(token: string): PaymentRow | undefined {
    return this.byToken.get(token);
  }

  findById(id: number): PaymentRow | undefined {
    return this.byId.get(id);
  }

  listOfSession(sessionId: number): PaymentRow[] {
    return this.ofSession.all(sessionId);
  }

  insert(payment: NewPayment, nowMs: number): number {
    return Number(
      this.insertRow.run(
        payment.sessionId,
        payment.provider,
        payment.token,
        payment.purpose,
        payment.amountMinor,
        payment.currency,
        nowMs,
        nowMs,
      ).lastInsertRowid,
    );
  }

  /** Records an outcome; false when the payment was already paid. */
  setState(id: number, state: PaymentState, nowMs: number): boolean {
    return this.stateUpdate.run(state, nowMs, id).changes === 1;
  }
}

/** A session's payment state: paid when every payment is; declined when the
 * latest unpaid one was declined; pending otherwise. */
export function sessionPaymentState(payments: readonly PaymentRow[]): PaymentState {
  const unpaid = payments.filter((payment) => payment.state !== 'paid');
  const latest = unpaid.at(-1);
  if (latest === undefined) return 'paid';
  return latest.state;
}
