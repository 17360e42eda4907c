// Payments of parking sessions at a payment provider, on the store (SQLite
// or PostgreSQL, async).
import type { Selectable } from 'kysely';
import type { Schema } from '../db/schema.js';
import type { RowLocks } from '../db/row-locks.js';
import { changed, CompiledOnce, type Executor, type Store } from '../db/store.js';

export type PaymentRow = Selectable<Schema['payments']>;
export type PaymentState = PaymentRow['state'];
export type PaymentPurpose = PaymentRow['purpose'];

export interface NewPayment {
  sessionId: number;
  provider: string;
  token: string;
  purpose: PaymentPurpose;
  amountMinor: number;
  currency: string;
  /** pending unless given: paid for a payment settled as it is made (nothing to pay). */
  state?: Exclude<PaymentState, 'declined'>;
}

export class PaymentRepository {
  readonly #kysely;
  readonly #locks: RowLocks;
  // Per request (every session body lists its payments; the pay page reads by token): compiled once.
  readonly #ofSession;
  readonly #byToken;
  // Per session created (its payment written, returned by its insert): compiled once.
  readonly #byId;
  readonly #insert;

  constructor(store: Store) {
    this.#kysely = store.kysely;
    this.#locks = store;
    this.#ofSession = new CompiledOnce(
      this.#kysely.selectFrom('payments').selectAll().where('session_id', '=', 0).orderBy('id'),
    );
    this.#byToken = new CompiledOnce(this.#kysely.selectFrom('payments').selectAll().where('token', '=', ''));
    this.#byId = new CompiledOnce(this.#kysely.selectFrom('payments').selectAll().where('id', '=', 0));
    // Its values bound in newPaymentValues' order.
    this.#insert = new CompiledOnce(
      this.#kysely.insertInto('payments').values(newPaymentValues(PLACEHOLDER_PAYMENT, 0)).returningAll(),
    );
  }

  async findByToken(token: string, on: Executor = this.#kysely): Promise<PaymentRow | undefined> {
    return (await this.#byToken.run(on, [token]))[0];
  }

  async findById(id: number, on: Executor = this.#kysely): Promise<PaymentRow | undefined> {
    return (await this.#byId.run(on, [id]))[0];
  }

  async listOfSession(sessionId: number, on: Executor = this.#kysely): Promise<PaymentRow[]> {
    return this.#ofSession.run(on, [sessionId]);
  }

  async insert(payment: NewPayment, nowMs: number, on: Executor = this.#kysely): Promise<number> {
    return (await this.insertRow(payment, nowMs, on)).id;
  }

  /** insert, returning the payment as stored. */
  async insertRow(payment: NewPayment, nowMs: number, on: Executor = this.#kysely): Promise<PaymentRow> {
    const [row] = await this.#insert.run(on, Object.values(newPaymentValues(payment, nowMs)));
    if (row === undefined) throw new Error('a payment insert returned no row');
    return row;
  }

  /** Records an outcome; false when the payment was already paid (a paid
   * payment never changes again). Inside a transaction `on`, it first locks
   * the payment's session row (PostgreSQL; SQLite's BEGIN IMMEDIATE holds
   * the database), as the session's end does: an outcome and a finalize at
   * once are serialized, and the later sees what the earlier wrote. */
  async setState(id: number, state: PaymentState, nowMs: number, on: Executor = this.#kysely): Promise<boolean> {
    await this.#locks.takeRowLocks(
      on
        .selectFrom('parking_sessions')
        .select('id')
        .where('id', '=', (eb) => eb.selectFrom('payments').select('session_id').where('id', '=', id)),
    );
    const result = await on
      .updateTable('payments')
      .set({ state, updated_at: nowMs })
      .where('id', '=', id)
      .where('state', '<>', 'paid')
      .executeTakeFirst();
    return changed(result) === 1;
  }
}

const PLACEHOLDER_PAYMENT: NewPayment = {
  sessionId: 0,
  provider: '',
  token: '',
  purpose: 'session',
  amountMinor: 0,
  currency: '',
};

/** The columns of a new payment, in the order its compiled insert binds them
 * (and a statement that inserts a payment itself: a session's creation on
 * PostgreSQL, api/sessions/creation-postgres.ts; NEW_PAYMENT_COLUMNS). */
export function newPaymentValues(payment: NewPayment, nowMs: number) {
  return {
    session_id: payment.sessionId,
    provider: payment.provider,
    token: payment.token,
    purpose: payment.purpose,
    amount_minor: payment.amountMinor,
    currency: payment.currency,
    state: payment.state ?? 'pending',
    created_at: nowMs,
    updated_at: nowMs,
  };
}

/** The columns newPaymentValues gives, in its order. */
export const NEW_PAYMENT_COLUMNS: readonly string[] = Object.keys(newPaymentValues(PLACEHOLDER_PAYMENT, 0));

/** A session's payment state: paid when every payment is; declined when the
 * latest unpaid one was declined; pending otherwise. */
export function sessionPaymentState(payments: readonly Pick<PaymentRow, 'state'>[]): PaymentState {
  const unpaid = payments.filter((payment) => payment.state !== 'paid');
  const latest = unpaid.at(-1);
  if (latest === undefined) return 'paid';
  return latest.state;
}
