// What a payment provider does for the API, so that a real provider (test
// mode only, spec 1) can sit beside the built-in sandbox: create a payment
// and give the phone a URL to continue it, serve that page, and take the
// provider's callback with the outcome.
import type { Executor } from '../db/store.js';
import type { NewPayment, PaymentPurpose, PaymentRow } from './repository.js';

export interface PaymentRequest {
  sessionId: number;
  purpose: PaymentPurpose;
  amountMinor: number;
  currency: string;
}

/** An HTML page and its status, as the pay routes send it. */
export interface PageResult {
  status: number;
  html: string;
}

export interface PaymentProvider {
  readonly name: string;
  /** Stores a pending payment (inside the caller's transaction `on`): the
   * payment preparePayment makes, inserted. */
  createPayment(request: PaymentRequest, on: Executor): Promise<PaymentRow>;
  /** The payment createPayment stores, made without storing it (its token
   * drawn, its state decided): for a statement that inserts it with other
   * rows (a session's creation on PostgreSQL, api/sessions/creation-postgres.ts). */
  preparePayment(request: PaymentRequest): NewPayment;
  /** Where the phone continues the payment: an absolute URL (pay_url). */
  payUrl(payment: PaymentRow): string;
  /** GET pay_url. `returnUrl` is the app's raw `?return_url=`, unchecked. */
  page(token: string, returnUrl: unknown): Promise<PageResult>;
  /** The provider's callback; for the sandbox its own form's POST. */
  callback(token: string, form: Readonly<Record<string, unknown>>): Promise<PageResult>;
  /** Calls `listener` with each payment whose state the provider changed.
   * The provider reports outcomes; the composition root (api/service.ts) wires
   * the session service, which decides what they change. */
  onOutcome(listener: PaymentOutcomeListener): void;
}

/** Called inside the transaction `on` that records a payment's new state
 * (which holds the payment's session's row lock). */
export type PaymentOutcomeListener = (payment: PaymentRow, on: Executor) => Promise<void>;
