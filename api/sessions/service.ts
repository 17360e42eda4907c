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
import type { ApiConfig } from '../config/index.js';
import type { EventPublisher } from '../events/types.js';
import type { Executor, Store } from '../db/store.js';
import type { PaymentProvider, PaymentRepository, PaymentRow } from '../payments/index.js';
import type { BoxRepository, BoxRow } from '../boxes/index.js';
import type { ParkingRepository, ParkingRow } from '../parkings/index.js';
import type { SessionRepository, SessionRow, SessionState } from './repository.js';
import { type KeyRequest, type MintDeps, mintSmartKey, type SmartKeyRow } from '../smart-keys/index.js';
import type { SessionCreation } from './creation.js';
import { SessionError } from './errors.js';
import { usedAmount } from './pricing.js';

/** What the session service touches: the store (its transactions), the
 * parkings and boxes it reads, the sessions and payments it writes, the
 * smart keys it mints, the provider that creates payments, and the event
 * stream it tells of a session's change (api/events/; rendered from the
 * database at the stream's next flush). */
export interface SessionServiceDeps extends MintDeps {
  events: Pick<EventPublisher, 'publishSession'>;
  store: Pick<Store, 'kysely'>;
  parkings: Pick<ParkingRepository, 'findById'>;
  boxes: Pick<BoxRepository, 'listOfParking'>;
  config: Pick<ApiConfig, 'exitKeyMinutes'>;
  sessions: Pick<SessionRepository, 'findById' | 'lock' | 'findOpenOfUser' | 'end'>;
  payments: Pick<PaymentRepository, 'listOfSession'>;
  paymentProvider: Pick<PaymentProvider, 'createPayment'>;
}

/** What a creation needs beyond the service: its reads and writes on the
 * store's engine (creation.ts). */
export interface SessionCreateDeps extends SessionServiceDeps {
  sessionCreation: SessionCreation;
}

/** A session just created, with the rows its response shows, as its
 * transaction wrote them: its smart key and payment, its parking and boxes. */
export interface CreatedSession {
  session: SessionRow;
  key: SmartKeyRow;
  payment: PaymentRow;
  parking: ParkingRow;
  boxes: readonly BoxRow[];
}

/** What a payment outcome reads and changes. */
export interface PaymentOutcomeDeps {
  sessions: Pick<SessionRepository, 'findById' | 'finish'>;
  events: Pick<EventPublisher, 'publishSession'>;
  payments: Pick<PaymentRepository, 'listOfSession'>;
}

function openSessionReasonOf(open: Pick<SessionRow, 'id' | 'state'> | undefined): string {
  return `the driver already has an open parking session${open ? ` (id ${open.id}, ${open.state})` : ''}`;
}

async function openSessionReason(ctx: Pick<SessionServiceDeps, 'sessions'>, userId: number): Promise<string> {
  return openSessionReasonOf(await ctx.sessions.findOpenOfUser(userId));
}

/** Creates an `entering` session with its smart key and payment, atomically;
 * refused (SessionCreateLimited, nothing written) past the driver's limit.
 * How the engine runs it (creation.ts): on SQLite the writes are one unit of
 * the group commit (api/db/group-commit.ts), the creations of one turn of the
 * event loop sharing a transaction; on PostgreSQL one statement reads and
 * one writes. Either way the promise settles after the COMMIT. */
export async function createSession(
  ctx: SessionCreateDeps,
  userId: number,
  parkingId: number,
): Promise<CreatedSession> {
  const prepared = await ctx.sessionCreation.prepare(parkingId, userId);
  if (!prepared) throw new SessionError('not_found', 'parking', [`no secured parking with id ${parkingId}`]);
  const { parking, boxes, openSession } = prepared;
  const reasons: string[] = [];
  if (parking.is_active !== 1) reasons.push('the secured parking is not active');
  if (boxes.length === 0) reasons.push('the secured parking has no boxes yet');
  if (openSession) reasons.push(openSessionReasonOf(openSession));
  const [first, ...rest] = reasons;
  if (first !== undefined) throw new SessionError('refused', 'parking', [first, ...rest]);

  const written = await prepared.write();
  if (written === undefined) throw new SessionError('refused', 'parking', [await openSessionReason(ctx, userId)]);
  ctx.events.publishSession(written.session.id);
  return { ...written, parking, boxes };
}

async function mustFind(ctx: Pick<SessionServiceDeps, 'sessions'>, on: Executor, id: number): Promise<SessionRow> {
  const session = await ctx.sessions.findById(id, on);
  if (!session) throw new Error(`session ${id} vanished`);
  return session;
}

function allPaid(payments: readonly Pick<PaymentRow, 'state'>[]): boolean {
  return payments.every((payment) => payment.state === 'paid');
}

export interface EndResult {
  session: SessionRow;
  /** What the driver owes beyond the payments made so far, minor units. */
  extraMinor: number;
  /** False when the session had ended already (another process's exit or finalize): nothing changed. */
  ended: boolean;
}

/** What ending a session decides, from its rows alone (both engines' paths
 * call it): the final amount for the minutes used, what the payments so far
 * do not cover, whether a fresh exit key is due, and the state after. */
export interface EndPlan {
  finalMinor: number;
  extraMinor: number;
  /** A key to leave by: asked for (finalize) and the window has passed. */
  exitKey: boolean;
  exitTries: number;
  state: SessionState;
}

export function planEnd(
  parking: Pick<ParkingRow, 'price_per_hour_minor' | 'tries'>,
  session: Pick<SessionRow, 'start_time' | 'end_time' | 'exit_remaining_tries'>,
  payments: readonly Pick<PaymentRow, 'amount_minor' | 'state'>[],
  endMs: number,
  exitKey: boolean,
): EndPlan {
  const finalMinor = usedAmount(parking.price_per_hour_minor, endMs - session.start_time);
  const covered = payments.reduce((sum, payment) => sum + payment.amount_minor, 0);
  const extraMinor = Math.max(0, finalMinor - covered);
  const freshKey = exitKey && endMs > session.end_time;
  return {
    finalMinor,
    extraMinor,
    exitKey: freshKey,
    exitTries: freshKey ? parking.tries : session.exit_remaining_tries, // a fresh key, fresh tries
    // An overstay is a new payment, pending: the session waits for it.
    state: extraMinor === 0 && allPaid(payments) ? 'finished' : 'exiting',
  };
}

function exitKeyRequest(
  ctx: Pick<SessionServiceDeps, 'config'>,
  session: SessionRow,
  parking: ParkingRow,
  boxes: readonly BoxRow[],
  endMs: number,
): KeyRequest {
  const exits = boxes.filter((box) => box.direction === 'exit');
  const startTime = Math.floor(endMs / 1000) * 1000;
  return {
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
  };
}

/**
 * Ends an open session at `endMs` inside the caller's transaction `on`
 * (whose caller holds the session's row lock, SessionRepository.lock): final
 * amount for the minutes used; an overstay payment for what the payments so
 * far do not cover; with `exitKey`, a key to leave by during
 * EXIT_KEY_MINUTES when the window has passed (finalize: the driver may
 * still be inside). The end is a conditional UPDATE (ended_at IS NULL): a
 * session another transaction ended already changes nothing, and its row
 * is returned with nothing extra owed.
 */
export async function endSession(
  ctx: SessionServiceDeps,
  on: Executor,
  session: SessionRow,
  endMs: number,
  exitKey: boolean,
): Promise<EndResult> {
  const parking = await ctx.parkings.findById(session.parking_id, on);
  if (!parking) throw new Error(`session ${session.id} lacks its parking`);
  const plan = planEnd(parking, session, await ctx.payments.listOfSession(session.id, on), endMs, exitKey);
  const end = { state: plan.state, endTime: endMs, amountMinor: plan.finalMinor, exitTries: plan.exitTries };
  if (!(await ctx.sessions.end(session.id, end, ctx.clock.now(), on)))
    return { session: await mustFind(ctx, on, session.id), extraMinor: 0, ended: false };
  if (plan.extraMinor > 0)
    await ctx.paymentProvider.createPayment(
      { sessionId: session.id, purpose: 'overstay', amountMinor: plan.extraMinor, currency: session.currency },
      on,
    );
  if (plan.exitKey)
    await mintSmartKey(
      ctx,
      on,
      exitKeyRequest(ctx, session, parking, await ctx.boxes.listOfParking(parking.id, on), endMs),
    );
  ctx.events.publishSession(session.id);
  return { session: await mustFind(ctx, on, session.id), extraMinor: plan.extraMinor, ended: true };
}

/** Ends the driver's session now (PUT .../finalize): not_found for an
 * unknown or another driver's session, refused once it ended. The session's
 * row is locked first (PostgreSQL; SQLite's BEGIN IMMEDIATE), so of two
 * finalizes, or a finalize and a payment's outcome, the later sees what the
 * earlier wrote. */
export async function finalizeSession(ctx: SessionServiceDeps, userId: number, sessionId: number): Promise<EndResult> {
  return ctx.store.kysely.transaction().execute(async (tx) => {
    const session = await ctx.sessions.lock(sessionId, tx);
    if (!session || session.user_id !== userId)
      throw new SessionError('not_found', 'session', [`no parking session ${sessionId} of this driver`]);
    if (session.state === 'finished')
      throw new SessionError('refused', 'session', ['the parking session is already finished']);
    if (session.ended_at !== null)
      throw new SessionError('refused', 'session', [
        'the parking session was already finalized (or the driver exited); it finishes once paid',
      ]);
    return endSession(ctx, tx, session, ctx.clock.now(), true);
  });
}

/** A payment's new state, inside its transaction `on` (which locked the
 * session's row first, PaymentRepository.setState): an ended session whose
 * payments are all paid is finished. */
export async function onPaymentOutcome(ctx: PaymentOutcomeDeps, on: Executor, payment: PaymentRow): Promise<void> {
  const session = await ctx.sessions.findById(payment.session_id, on);
  if (session?.state !== 'exiting' || !allPaid(await ctx.payments.listOfSession(session.id, on))) return;
  if (await ctx.sessions.finish(session.id, on)) ctx.events.publishSession(session.id);
}
