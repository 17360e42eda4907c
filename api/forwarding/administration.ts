// The forwarding outbox (spec 6) as the operator sees it: per URL, box logs
// pending, delivered and dead, the last error and whether a 410 Gone disabled
// it; dead deliveries and disabled URLs revived; box logs queued again.
import type { Db } from '../db/open.js';
import { notFound, refused } from '../domain-error.js';
import { ParkingRepository, type ParkingRow } from '../repositories/parkings.js';
import { OutboxRepository, type UrlStatus } from './outbox.js';

/** The outbox's status of a URL, its times as ISO. */
export type ForwardingStatus = Omit<UrlStatus, 'last_attempt_at' | 'disabled_at'> & {
  last_attempt_at: string | null;
  disabled_at: string | null;
};

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

function statusOf(row: UrlStatus): ForwardingStatus {
  return { ...row, last_attempt_at: iso(row.last_attempt_at), disabled_at: iso(row.disabled_at) };
}

function findParking(db: Db, parkingId: number): ParkingRow {
  const parking = new ParkingRepository(db).findById(parkingId);
  if (!parking) throw notFound(`no secured parking with id ${parkingId}`);
  return parking;
}

/** Per URL, of one parking or all of them. */
export function forwardingStatus(db: Db, parkingId: number | undefined): ForwardingStatus[] {
  if (parkingId !== undefined) findParking(db, parkingId);
  return new OutboxRepository(db).status(parkingId).map(statusOf);
}

export interface Revival {
  parking_id: number;
  revived_deliveries: number;
  /** URLs a 410 Gone had disabled, sent to again. */
  enabled_urls: string[];
}

/** A parking's dead deliveries pending again, due now, and its URLs a 410 disabled enabled. */
export function reviveDeadDeliveries(db: Db, parkingId: number, nowMs: number): Revival {
  findParking(db, parkingId);
  const { revived, enabledUrls } = new OutboxRepository(db).revive(parkingId, nowMs);
  return { parking_id: parkingId, revived_deliveries: revived, enabled_urls: enabledUrls };
}

export interface Replay {
  parking_id: number;
  url: string;
  since: string;
  queued: number;
}

/**
 * Queues again, as new deliveries (new webhook-id), the parking's box logs
 * stored since `sinceMs` (received by the service, not the boxes' own
 * times), to its current URL, with the rule that queued them (verified
 * ones, unverified too if the parking forwards them): a receiver that lost
 * data gets it back, and deduplicates what it had on its own records.
 */
export function replayBoxLogs(db: Db, parkingId: number, sinceMs: number, nowMs: number): Replay {
  const parking = findParking(db, parkingId);
  if (parking.forwarding_url === null || parking.forwarding_expose !== 1) {
    throw refused(
      `parking ${parkingId} does not forward its box logs: set a URL with --expose true first (admin parking forwarding)`,
    );
  }
  if (sinceMs > nowMs) throw refused(`--since ${new Date(sinceMs).toISOString()} is in the future`);
  const queued = new OutboxRepository(db).replay(
    parkingId,
    parking.forwarding_url,
    sinceMs,
    parking.forwarding_unverified === 1,
    nowMs,
  );
  return { parking_id: parkingId, url: parking.forwarding_url, since: new Date(sinceMs).toISOString(), queued };
}
