// The JSON the routes answer: a smart key as spec 2.6, a parking session as
// spec 2.5 plus payment_state, and the session body of spec 4.4.
import type { Executor, Store } from '../db/store.js';
import type { PaymentProvider } from '../payments/provider.js';
import { formatMinorUnits, type ParkingRow } from '../parkings/repository.js';
import {
  sessionPaymentState,
  type PaymentRepository,
  type PaymentRow,
  type PaymentState,
} from '../payments/repository.js';
import type { SessionRow, SessionState } from './repository.js';
import type { SmartKeyRepository, SmartKeyRow } from '../smart-keys/repository.js';
import type { CreatedSession } from './service.js';
import { isoTime } from '../http/time.js';

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

/** Keys' bodies read their parkings and their boxes' MAC addresses (the
 * parkings' tables, read here in place). */
export interface SmartKeyViewDeps {
  store: Pick<Store, 'kysely'>;
}

type KeyParking = Pick<ParkingRow, 'id' | 'name' | 'is_active' | 'is_online'>;

function smartKeyBody(key: SmartKeyRow, parking: KeyParking, macs: ReadonlyMap<number, string>): SmartKeyBody {
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
      access_point: { module_id: moduleId, mac_address: macs.get(moduleId) ?? '' },
    })),
  };
}

/** The bodies of keys, in their order; a key whose parking is gone is left out. */
export async function smartKeyBodies(
  ctx: SmartKeyViewDeps,
  keys: readonly SmartKeyRow[],
  on: Executor = ctx.store.kysely,
): Promise<SmartKeyBody[]> {
  if (keys.length === 0) return [];
  const parkingIds = [...new Set(keys.map((key) => key.parking_id))];
  const moduleIds = [...new Set(keys.flatMap((key) => JSON.parse(key.module_ids) as number[]))];
  const parkings = await on
    .selectFrom('secured_parkings')
    .select(['id', 'name', 'is_active', 'is_online'])
    .where('id', 'in', parkingIds)
    .execute();
  const boxes =
    moduleIds.length === 0
      ? []
      : await on.selectFrom('boxes').select(['module_id', 'mac_address']).where('module_id', 'in', moduleIds).execute();
  const parkingOf = new Map(parkings.map((parking) => [parking.id, parking]));
  const macs = new Map(boxes.map((box) => [box.module_id, box.mac_address]));
  return keys.flatMap((key) => {
    const parking = parkingOf.get(key.parking_id);
    return parking ? [smartKeyBody(key, parking, macs)] : [];
  });
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
