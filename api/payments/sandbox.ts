// The built-in sandbox provider: pay_url is PUBLIC_URL/pay/<token> (192
// random bits, base64url), the page takes a test card, and its own form POST
// is the callback. Test cards: 4242424242424242 succeeds, 4000000000000002 is
// declined, an expiry date in the past is refused (the payment stays as it
// was); anything else is refused as no test card.
import { randomSecret } from '../auth/index.js';
import type { Clock } from '../../lib/clock.js';
import { formatMinorUnits } from '../parkings/index.js';
import type { NewPayment, PaymentRepository, PaymentRow } from './repository.js';
import { renderPage, type PageModel } from './page.js';
import type { PageResult, PaymentOutcomeListener, PaymentProvider, PaymentRequest } from './provider.js';
import type { Executor, Store } from '../db/store.js';
import { safeReturnUrl } from './return-url.js';

export const TEST_CARD_SUCCEEDS = '4242424242424242';
export const TEST_CARD_DECLINED = '4000000000000002';

export interface SandboxOptions {
  store: Pick<Store, 'kysely'>;
  payments: PaymentRepository;
  clock: Clock;
  publicUrl: string;
  returnSchemes: readonly string[];
  /** The parking's name shown on the page. */
  parkingNameOf: (sessionId: number) => Promise<string>;
}

type Expiry = { ok: true; expired: boolean } | { ok: false };

/** "MM/YY" or "MM/YYYY"; a card is valid through the last day of its month (UTC). */
export function parseExpiry(raw: string, nowMs: number): Expiry {
  const match = /^(\d{2})\s*\/\s*(\d{2}|\d{4})$/.exec(raw.trim());
  if (!match) return { ok: false };
  const month = Number(match[1]);
  const year = (match[2] ?? '').length === 2 ? 2000 + Number(match[2]) : Number(match[2]);
  if (month < 1 || month > 12) return { ok: false };
  return { ok: true, expired: Date.UTC(year, month, 1) <= nowMs };
}

function field(form: Readonly<Record<string, unknown>>, name: string): string {
  const value = form[name];
  return typeof value === 'string' ? value : '';
}

export class SandboxProvider implements PaymentProvider {
  readonly name = 'sandbox';
  readonly #outcomeListeners = new Set<PaymentOutcomeListener>();

  constructor(private readonly options: SandboxOptions) {}

  onOutcome(listener: PaymentOutcomeListener): void {
    this.#outcomeListeners.add(listener);
  }

  async createPayment(request: PaymentRequest, on: Executor): Promise<PaymentRow> {
    return this.options.payments.insertRow(this.preparePayment(request), this.options.clock.now(), on);
  }

  preparePayment(request: PaymentRequest): NewPayment {
    // Nothing to pay (a free parking): settled at once.
    const state = request.amountMinor === 0 ? 'paid' : 'pending';
    return { ...request, provider: this.name, token: randomSecret(24), state };
  }

  payUrl(payment: PaymentRow): string {
    return `${this.options.publicUrl}/pay/${payment.token}`;
  }

  async page(token: string, returnUrlRaw: unknown): Promise<PageResult> {
    const returnUrl = safeReturnUrl(returnUrlRaw, this.options.returnSchemes);
    const payment = await this.options.payments.findByToken(token);
    if (!payment) return this.unknown(returnUrl);
    return this.show(payment, 200, this.stateMessage(payment), returnUrl);
  }

  async callback(token: string, form: Readonly<Record<string, unknown>>): Promise<PageResult> {
    const returnUrl = safeReturnUrl(form.return_url, this.options.returnSchemes);
    const payment = await this.options.payments.findByToken(token);
    if (!payment) return this.unknown(returnUrl);
    if (payment.state === 'paid') return this.show(payment, 200, 'This payment is already paid.', returnUrl);
    const action = field(form, 'action');
    if (action === 'decline')
      return this.settle(payment, 'declined', 'You declined the payment. You can pay now or later.', returnUrl);
    if (action !== 'pay') return this.show(payment, 400, 'Choose Pay or Decline.', returnUrl);

    const card = field(form, 'card_number').replace(/[\s-]/g, '');
    const expiryRaw = field(form, 'expiry');
    const expiry = parseExpiry(expiryRaw, this.options.clock.now());
    const refuse = (message: string) => this.show(payment, 422, message, returnUrl, expiryRaw.slice(0, 7));
    if (!expiry.ok) return refuse('Enter the expiry date as MM/YY.');
    if (expiry.expired) return refuse('This card has expired. Nothing was charged.');
    if (card === TEST_CARD_SUCCEEDS) return this.settle(payment, 'paid', 'Payment accepted. Thank you.', returnUrl);
    if (card === TEST_CARD_DECLINED)
      return this.settle(payment, 'declined', 'The card was declined. Nothing was charged.', returnUrl);
    return refuse('This sandbox takes test cards only: 4242 4242 4242 4242 or 4000 0000 0000 0002.');
  }

  private async settle(
    payment: PaymentRow,
    state: 'paid' | 'declined',
    message: string,
    returnUrl: string | undefined,
  ): Promise<PageResult> {
    const { payments } = this.options;
    // setState locks the payment's session first: an outcome and the session's end at once are serialized.
    const updated = await this.options.store.kysely.transaction().execute(async (tx) => {
      await payments.setState(payment.id, state, this.options.clock.now(), tx);
      const row = await payments.findById(payment.id, tx);
      if (!row) throw new Error(`payment ${payment.id} vanished`);
      for (const listener of this.#outcomeListeners) await listener(row, tx);
      return row;
    });
    // A concurrent Pay may have won: show what is stored.
    return this.show(updated, 200, updated.state === state ? message : this.stateMessage(updated), returnUrl);
  }

  private stateMessage(payment: PaymentRow): string {
    switch (payment.state) {
      case 'paid':
        return 'This payment is already paid.';
      case 'declined':
        return 'The last attempt was declined. You can try again.';
      case 'pending':
        return 'Enter a test card to pay, or decline.';
    }
  }

  private async show(
    payment: PaymentRow,
    status: number,
    message: string,
    returnUrl: string | undefined,
    expiry?: string,
  ): Promise<PageResult> {
    const model: PageModel = {
      title: payment.state === 'paid' ? 'Paid' : 'Parking payment',
      message,
      parkingName: await this.options.parkingNameOf(payment.session_id),
      amount: formatMinorUnits(payment.amount_minor),
      currency: payment.currency,
      state: payment.state,
      form: payment.state !== 'paid',
      returnUrl,
      ...(expiry === undefined ? {} : { expiry }),
    };
    return { status, html: renderPage(model) };
  }

  private unknown(returnUrl: string | undefined): PageResult {
    return {
      status: 404,
      html: renderPage({
        title: 'Unknown payment',
        message: 'There is no payment at this address. Check the link in the app.',
        form: false,
        returnUrl,
      }),
    };
  }
}
