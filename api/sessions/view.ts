// The JSON the routes answer: a smart key as spec 2.6, a parking session as
// spec 2.5 plus payment_state, and the session body of spec 4.4.
import type { PaymentProvider } from '../payments/provider.js';
import type { BoxesSqlite } from '../repositories/boxes.js';
import { formatMinorUnits, type ParkingsSqlite, type ParkingRow } from '../repositories/parkings.js';
import {
  sessionPaymentState,
  type PaymentRepository,
  type PaymentRow,
  type PaymentState,
} from '../repositories/payments.js';
import type { SessionRow, SessionState } from '../repositories/sessions.js';
import type { SmartKeyRepository, SmartKeyRow } from '../repositories/smart-keys.js';
import { isoTime } from './time.js';

export interface SmartKeyBody {
  id: number;
  secured_parking_id: number;
  name: string;
  description: string | null;
  is_active: boolean | null;
  type: string;
  access_command: string;
  is_online: boolean;
  start_time: string;
  end_time: string;
  /** An addition to spec 2.6: when an operator revoked the key, else null. */
  revoked_at: string | null;
  access_points: { access_point: { module_id: number; mac_address: string } }[];
}

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

/** A smart key's body reads its boxes' MAC addresses. */
export interface SmartKeyViewDeps {
  boxesSqlite: Pick<BoxesSqlite, 'findByModuleId'>;
}

export function smartKeyBody(ctx: SmartKeyViewDeps, key: SmartKeyRow, parking: ParkingRow): SmartKeyBody {
  const moduleIds = JSON.parse(key.module_ids) as number[];
  return {
    id: key.id,
    secured_parking_id: key.parking_id,
    name: parking.name,
    description: key.description,
    is_active: parking.is_active === 1,
    type: key.type,
    access_command: key.access_command.toString('base64'),
    is_online: parking.is_online === 1,
    start_time: isoTime(key.start_time),
    end_time: isoTime(key.end_time),
    revoked_at: key.revoked_at === null ? null : isoTime(key.revoked_at),
    access_points: moduleIds.map((moduleId) => ({
      access_point: { module_id: moduleId, mac_address: ctx.boxesSqlite.findByModuleId(moduleId)?.mac_address ?? '' },
    })),
  };
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
  parkingsSqlite: Pick<ParkingsSqlite, 'findById'>;
  smartKeys: Pick<SmartKeyRepository, 'latestOf'>;
  payments: Pick<PaymentRepository, 'listOfSession'>;
  paymentProvider: Pick<PaymentProvider, 'payUrl'>;
}

/** Spec 4.4's body for a session: its amount, pay_url, latest smart key. */
export function sessionResponseBody(ctx: SessionViewDeps, session: SessionRow): SessionResponseBody {
  const parking = ctx.parkingsSqlite.findById(session.parking_id);
  const key = ctx.smartKeys.latestOf(session.id);
  const payments = ctx.payments.listOfSession(session.id);
  const payment = currentPayment(payments);
  if (!parking || !key || !payment) throw new Error(`session ${session.id} lacks its parking, key or payment`);
  return {
    pay_url: ctx.paymentProvider.payUrl(payment),
    amount: formatMinorUnits(session.amount_minor),
    currency: session.currency,
    parking_session: parkingSessionBody(session, payments),
    smart_key: smartKeyBody(ctx, key, parking),
  };
}
