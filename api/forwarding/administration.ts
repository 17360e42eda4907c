// The forwarding outbox (spec 6) as the operator sees it: per URL, box logs
// pending, delivered and dead, and the last error; and dead deliveries revived.
import type { Db } from '../db/open.js';
import { notFound } from '../domain-error.js';
import { ParkingRepository } from '../repositories/parkings.js';
import { OutboxRepository, type UrlStatus } from './outbox.js';

/** The outbox's status of a URL, its last attempt as an ISO time. */
export type ForwardingStatus = Omit<UrlStatus, 'last_attempt_at'> & { last_attempt_at: string | null };

function statusOf(row: UrlStatus): ForwardingStatus {
  return { ...row, last_attempt_at: row.last_attempt_at === null ? null : new Date(row.last_attempt_at).toISOString() };
}

function assertParking(db: Db, parkingId: number): void {
  if (!new ParkingRepository(db).findById(parkingId)) throw notFound(`no secured parking with id ${parkingId}`);
}

/** Per URL, of one parking or all of them. */
export function forwardingStatus(db: Db, parkingId: number | undefined): ForwardingStatus[] {
  if (parkingId !== undefined) assertParking(db, parkingId);
  return new OutboxRepository(db).status(parkingId).map(statusOf);
}

/** A parking's dead deliveries pending again, due now; how many. */
export function reviveDeadDeliveries(db: Db, parkingId: number, nowMs: number): number {
  assertParking(db, parkingId);
  return new OutboxRepository(db).revive(parkingId, nowMs);
}
