// A session's creation as the session service asks for it, apart from how
// an engine runs it: what it reads (the parking, its boxes, the driver's
// open session) and what it writes (a token of the driver's creation limit,
// the session, its smart key, its payment). One implementation per engine,
// picked by creation-of.ts: creation-sqlite.ts (the repositories' reads, the
// writes as one unit of the group commit), creation-postgres.ts (one
// statement that reads and takes the ids, one that writes). What a creation
// decides is the same on both: the refusals (service.ts) and what it
// writes (planCreation).
import type { BoxRow } from '../boxes/index.js';
import type { ParkingRow } from '../parkings/index.js';
import type { PaymentRequest, PaymentRow } from '../payments/index.js';
import type { KeyRequest, SmartKeyRow } from '../smart-keys/index.js';
import { windowAmount } from './pricing.js';
import type { NewSession, SessionRow } from './repository.js';

export interface CreationReads {
  parking: ParkingRow;
  /** By module id, as BoxRepository.listOfParking. */
  boxes: BoxRow[];
  /** The driver's session that is not finished (at most one: parking_sessions_one_open). */
  openSession: Pick<SessionRow, 'id' | 'state'> | undefined;
}

/** The rows a creation wrote, as its statements returned them. */
export interface WrittenSession {
  session: SessionRow;
  key: SmartKeyRow;
  payment: PaymentRow;
}

/** A creation's reads, and the writes that follow them. */
export interface PreparedCreation extends CreationReads {
  /**
   * Takes a token of the driver's bucket (create-limit.ts) and writes the
   * session, its smart key and its payment, all or nothing; settles once
   * committed. Called only when the reads refuse nothing (service.ts).
   * Resolves with the rows as written, or undefined when the partial unique
   * index parking_sessions_one_open refused the session: a concurrent
   * creation of the driver (another request, another process) got there
   * first, and no session, key or payment was written. Rejects with
   * SessionCreateLimited past the driver's limit, nothing written.
   */
  write(): Promise<WrittenSession | undefined>;
}

export interface SessionCreation {
  /** The reads of a creation of a session of `userId` at `parkingId`; undefined when there is no such parking. */
  prepare(parkingId: number, userId: number): Promise<PreparedCreation | undefined>;
}

/** What a creation at `nowMs` writes, the same on both engines; its key and
 * payment name the session, whose id the engine knows when it writes
 * (keyRequestOf, paymentRequestOf). Plain data, no closures: under tsx
 * (keepNames) each closure made a request costs a defineProperty. */
export interface CreationPlan {
  userId: number;
  parking: ParkingRow;
  boxes: readonly BoxRow[];
  session: NewSession;
}

export function planCreation(
  userId: number,
  parking: ParkingRow,
  boxes: readonly BoxRow[],
  nowMs: number,
): CreationPlan {
  // Whole seconds: the ACCESS frame carries seconds, and the API shows the same times.
  const startTime = Math.floor(nowMs / 1000) * 1000;
  return {
    userId,
    parking,
    boxes,
    session: {
      userId,
      parkingId: parking.id,
      startTime,
      endTime: startTime + parking.max_duration_minutes * 60_000,
      tries: parking.tries,
      amountMinor: windowAmount(parking.price_per_hour_minor, parking.max_duration_minutes),
      currency: parking.currency,
    },
  };
}

/** The session's smart key: entry and exit at the parking's boxes during the session's window. */
export function keyRequestOf({ userId, parking, boxes, session }: CreationPlan, sessionId: number): KeyRequest {
  return {
    userId,
    parking,
    sessionId,
    purpose: 'session',
    description: `Parking session ${sessionId}: entry and exit`,
    boxes,
    startTime: session.startTime,
    endTime: session.endTime,
    maxEntries: parking.tries,
    maxExits: parking.tries,
  };
}

/** The session's payment: its window's price. */
export function paymentRequestOf({ session }: CreationPlan, sessionId: number): PaymentRequest {
  return { sessionId, purpose: 'session', amountMinor: session.amountMinor, currency: session.currency };
}
