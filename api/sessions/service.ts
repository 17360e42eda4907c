// Parking sessions apart from HTTP: creation (one open session per driver),
// finalize, and what a payment outcome changes. The state machine:
//
//   entering --verified OK at an entrance box--> active
//   entering | active --verified OK at an exit box, or finalize--> exiting
//   exiting --every payment of the session paid--> finished
//
// Ending a session (finalize or a verified exit) fixes end_time and the final
// amount (the minutes used); past the window the driver owes the difference
// as a second payment, and finalize also gives an exit key for
// EXIT_KEY_MINUTES so nobody is locked in.
import type { ApiConfig } from '../config.js';
import type { EventPublisher } from '../events/types.js';
import type { Db } from '../db/open.js';
import type { PaymentProvider } from '../payments/provider.js';
import type { BoxesSqlite } from '../repositories/boxes.js';
import type { ParkingsSqlite } from '../repositories/parkings.js';
import type { PaymentRepository, PaymentRow } from '../repositories/payments.js';
import type { SessionRepository, SessionRow } from '../repositories/sessions.js';
import { SessionError } from './errors.js';
import { usedAmount, windowAmount } from './pricing.js';
import { mintSmartKey, type MintDeps } from './smart-keys.js';

/** What the session service touches: its transaction, the parkings and
 * boxes it reads, the sessions and payments it writes, the smart keys it
 * mints, the provider that creates payments, and the event stream it tells
 * of a session's change (api/events/; rendered from the database at the
 * stream's next flush, so telling it inside the transaction is safe). */
export interface SessionServiceDeps extends MintDeps {
  events: Pick<EventPublisher, 'publishSession'>;
  db: Db;
  config: Pick<ApiConfig, 'exitKeyMinutes'>;
  parkingsSqlite: Pick<ParkingsSqlite, 'findById'>;
  boxesSqlite: Pick<BoxesSqlite, 'listOfParking'>;
  sessions: SessionRepository;
  payments: Pick<PaymentRepository, 'listOfSession'>;
  paymentProvider: Pick<PaymentProvider, 'createPayment'>;
}

/** What a payment outcome reads and changes. */
export interface PaymentOutcomeDeps {
  sessions: Pick<SessionRepository, 'findById' | 'setState'>;
  events: Pick<EventPublisher, 'publishSession'>;
  payments: Pick<PaymentRepository, 'listOfSession'>;
}

function openSessionReason(ctx: Pick<SessionServiceDeps, 'sessions'>, userId: number): string {
  const open = ctx.sessions.findOpenOfUser(userId);
  return `the driver already has an open parking session${open ? ` (id ${open.id}, ${open.state})` : ''}`;
}

/** Creates an `entering` session with its smart key and payment, atomically. */
export function createSession(ctx: SessionServiceDeps, userId: number, parkingId: number): SessionRow {
  const parking = ctx.parkingsSqlite.findById(parkingId);
  if (!parking) throw new SessionError('not_found', 'parking', [`no secured parking with id ${parkingId}`]);
  const boxes = ctx.boxesSqlite.listOfParking(parking.id);
  const reasons: string[] = [];
  if (parking.is_active !== 1) reasons.push('the secured parking is not active');
  if (boxes.length === 0) reasons.push('the secured parking has no boxes yet');
  if (ctx.sessions.findOpenOfUser(userId)) reasons.push(openSessionReason(ctx, userId));
  const [first, ...rest] = reasons;
  if (first !== undefined) throw new SessionError('refused', 'parking', [first, ...rest]);

  const session = ctx.db
    .transaction(() => {
      const now = ctx.clock.now();
      // Whole seconds: the ACCESS frame carries seconds, and the API shows the same times.
      const startTime = Math.floor(now / 1000) * 1000;
      const endTime = startTime + parking.max_duration_minutes * 60_000;
      const amountMinor = windowAmount(parking.price_per_hour_minor, parking.max_duration_minutes);
      const id = ctx.sessions.insert(
        {
          userId,
          parkingId: parking.id,
          startTime,
          endTime,
          tries: parking.tries,
          amountMinor,
          currency: parking.currency,
        },
        now,
      );
      // The unique index caught a concurrent creation (another process, say).
      if (id === undefined) throw new SessionError('refused', 'parking', [openSessionReason(ctx, userId)]);
      mintSmartKey(ctx, {
        userId,
        parking,
        sessionId: id,
        purpose: 'session',
        description: `Parking session ${id}: entry and exit`,
        boxes,
        startTime,
        endTime,
        maxEntries: parking.tries,
        maxExits: parking.tries,
      });
      ctx.paymentProvider.createPayment({ sessionId: id, purpose: 'session', amountMinor, currency: parking.currency });
      return mustFind(ctx, id);
    })
    .immediate(); // the write lock at BEGIN: another process waits instead of failing mid-way
  ctx.events.publishSession(session.id);
  return session;
}

function mustFind(ctx: Pick<SessionServiceDeps, 'sessions'>, id: number): SessionRow {
  const session = ctx.sessions.findById(id);
  if (!session) throw new Error(`session ${id} vanished`);
  return session;
}

function allPaid(payments: readonly PaymentRow[]): boolean {
  return payments.every((payment) => payment.state === 'paid');
}

export interface EndResult {
  session: SessionRow;
  /** What the driver owes beyond the payments made so far, minor units. */
  extraMinor: number;
}

/**
 * Ends an open session at `endMs` (inside the caller's transaction): final
 * amount for the minutes used; an overstay payment for what the payments so
 * far do not cover; with `exitKey`, a key to leave by during EXIT_KEY_MINUTES
 * when the window has passed (finalize: the driver may still be inside).
 */
export function endSession(ctx: SessionServiceDeps, session: SessionRow, endMs: number, exitKey: boolean): EndResult {
  const parking = ctx.parkingsSqlite.findById(session.parking_id);
  if (!parking) throw new Error(`session ${session.id} lacks its parking`);
  const finalMinor = usedAmount(parking.price_per_hour_minor, endMs - session.start_time);
  const payments = ctx.payments.listOfSession(session.id);
  const covered = payments.reduce((sum, payment) => sum + payment.amount_minor, 0);
  const extraMinor = Math.max(0, finalMinor - covered);
  if (extraMinor > 0)
    ctx.paymentProvider.createPayment({
      sessionId: session.id,
      purpose: 'overstay',
      amountMinor: extraMinor,
      currency: session.currency,
    });

  let exitTries = session.exit_remaining_tries;
  if (exitKey && endMs > session.end_time) {
    const boxes = ctx.boxesSqlite.listOfParking(parking.id);
    const exits = boxes.filter((box) => box.direction === 'exit');
    const startTime = Math.floor(endMs / 1000) * 1000;
    mintSmartKey(ctx, {
      userId: session.user_id,
      parking,
      sessionId: session.id,
      purpose: 'exit',
      description: `Exit key of parking session ${session.id} (past its window; valid ${ctx.config.exitKeyMinutes} minutes)`,
      boxes: exits.length > 0 ? exits : boxes,
      startTime,
      endTime: startTime + ctx.config.exitKeyMinutes * 60_000,
      maxEntries: 0,
      maxExits: parking.tries,
    });
    exitTries = parking.tries; // a fresh key, fresh tries
  }
  const state = allPaid(ctx.payments.listOfSession(session.id)) ? 'finished' : 'exiting';
  ctx.sessions.end(session.id, state, endMs, finalMinor, exitTries, ctx.clock.now());
  ctx.events.publishSession(session.id);
  return { session: mustFind(ctx, session.id), extraMinor };
}

/** Ends the driver's session now (PUT .../finalize): not_found for an
 * unknown or another driver's session, refused once it ended. */
export function finalizeSession(ctx: SessionServiceDeps, userId: number, sessionId: number): EndResult {
  return ctx.db
    .transaction(() => {
      const session = ctx.sessions.findById(sessionId);
      if (!session || session.user_id !== userId)
        throw new SessionError('not_found', 'session', [`no parking session ${sessionId} of this driver`]);
      if (session.state === 'finished')
        throw new SessionError('refused', 'session', ['the parking session is already finished']);
      if (session.ended_at !== null)
        throw new SessionError('refused', 'session', [
          'the parking session was already finalized (or the driver exited); it finishes once paid',
        ]);
      return endSession(ctx, session, ctx.clock.now(), true);
    })
    .immediate();
}

/** A payment's new state (inside its transaction): an ended session whose
 * payments are all paid is finished. */
export function onPaymentOutcome(ctx: PaymentOutcomeDeps, payment: PaymentRow): void {
  const session = ctx.sessions.findById(payment.session_id);
  if (session?.state === 'exiting' && allPaid(ctx.payments.listOfSession(session.id))) {
    ctx.sessions.setState(session.id, 'finished');
    ctx.events.publishSession(session.id);
  }
}
