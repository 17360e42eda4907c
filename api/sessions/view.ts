// The JSON the session routes answer: a parking session as spec 2.5 plus
// payment_state, and the session body of spec 4.4 (its smart key as
// api/smart-keys/view.ts writes it).
import {
  type PaymentProvider,
  type PaymentRepository,
  type PaymentRow,
  type PaymentState,
  sessionPaymentState,
} from '../payments/index.js';
import { formatMinorUnits } from '../parkings/index.js';
import type { SessionRow, SessionState } from './repository.js';
import {
  smartKeyBodies,
  smartKeyBody,
  type SmartKeyBody,
  type SmartKeyRepository,
  type SmartKeyViewDeps,
} from '../smart-keys/index.js';
import type { CreatedSession } from './service.js';
import { isoTime } from '../http/time.js';

export interface ParkingSessionBody {
  id: number;
  type: 'pay_per_use';
  state: SessionState;
  start_time: string;
  end_time: string;
  entrance_remaining_tries: number;
  exit_remaining_tries: number;
  payment_state: PaymentState;
}

export interface SessionResponseBody {
  pay_url: string;
  amount: string;
  currency: string;
  parking_session: ParkingSessionBody;
  smart_key: SmartKeyBody;
}

export function parkingSessionBody(session: SessionRow, payments: readonly PaymentRow[]): ParkingSessionBody {
  return {
    id: session.id,
    type: 'pay_per_use',
    state: session.state,
    start_time: isoTime(session.start_time),
    end_time: isoTime(session.end_time),
    entrance_remaining_tries: session.entrance_remaining_tries,
    exit_remaining_tries: session.exit_remaining_tries,
    payment_state: sessionPaymentState(payments),
  };
}

/** The payment the driver should open now: the latest unpaid one, else the latest. */
function currentPayment(payments: readonly PaymentRow[]): PaymentRow | undefined {
  return payments.filter((payment) => payment.state !== 'paid').at(-1) ?? payments.at(-1);
}

/** A session's response reads its parking, latest key, payments and their pay URLs. */
export interface SessionViewDeps extends SmartKeyViewDeps {
  smartKeys: Pick<SmartKeyRepository, 'latestOf'>;
  payments: Pick<PaymentRepository, 'listOfSession'>;
  paymentProvider: Pick<PaymentProvider, 'payUrl'>;
}

/** Spec 4.4's body for a session: its amount, pay_url, latest smart key. */
export async function sessionResponseBody(ctx: SessionViewDeps, session: SessionRow): Promise<SessionResponseBody> {
  const key = await ctx.smartKeys.latestOf(session.id);
  const payments = await ctx.payments.listOfSession(session.id);
  const [keyBody] = key ? await smartKeyBodies(ctx, [key]) : [];
  return responseBody(ctx, session, keyBody, payments);
}

/** Spec 4.4's body for a session just created, from the rows its creation
 * wrote and read (api/sessions/service.ts, CreatedSession): the same body
 * sessionResponseBody reads back, without reading it again. */
export function createdSessionBody(
  ctx: Pick<SessionViewDeps, 'paymentProvider'>,
  created: Pick<CreatedSession, 'session' | 'key' | 'payment' | 'parking' | 'boxes'>,
): SessionResponseBody {
  const macs = new Map(created.boxes.map((box) => [box.module_id, box.mac_address]));
  return responseBody(ctx, created.session, smartKeyBody(created.key, created.parking, macs), [created.payment]);
}

function responseBody(
  ctx: Pick<SessionViewDeps, 'paymentProvider'>,
  session: SessionRow,
  keyBody: SmartKeyBody | undefined,
  payments: readonly PaymentRow[],
): SessionResponseBody {
  const payment = currentPayment(payments);
  if (!keyBody || !payment) throw new Error(`session ${session.id} lacks its parking, key or payment`);
  return {
    pay_url: ctx.paymentProvider.payUrl(payment),
    amount: formatMinorUnits(session.amount_minor),
    currency: session.currency,
    parking_session: parkingSessionBody(session, payments),
    smart_key: keyBody,
  };
}
