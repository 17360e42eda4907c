// The forwarding outbox (spec 6) as the operator sees it: per URL, box logs
// pending, delivered and dead, the last error and whether a 410 Gone disabled
// it; dead deliveries and disabled URLs revived; box logs queued again.
import type { Store } from '../db/store.js';
import { notFound, refused } from '../http/domain-error.js';
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

const noSuchParking = (parkingId: number) => notFound(`no secured parking with id ${parkingId}`);

/** The parking's forwarding settings; not_found when there is none. */
async function findParking(store: Store, parkingId: number) {
  const parking = await store.kysely
    .selectFrom('secured_parkings')
    .select(['forwarding_url', 'forwarding_expose', 'forwarding_unverified'])
    .where('id', '=', parkingId)
    .executeTakeFirst();
  if (!parking) throw noSuchParking(parkingId);
  return parking;
}

/** Per URL, of one parking or all of them. */
export async function forwardingStatus(store: Store, parkingId: number | undefined): Promise<ForwardingStatus[]> {
  if (parkingId !== undefined) await findParking(store, parkingId);
  return (await new OutboxRepository(store).status(parkingId)).map(statusOf);
}

export interface Revival {
  parking_id: number;
  revived_deliveries: number;
  /** URLs a 410 Gone had disabled, sent to again. */
  enabled_urls: string[];
}

/** A parking's dead deliveries pending again, due now, and its URLs a 410 disabled enabled. */
export async function reviveDeadDeliveries(store: Store, parkingId: number, nowMs: number): Promise<Revival> {
  await findParking(store, parkingId);
  const { revived, enabledUrls } = await new OutboxRepository(store).revive(parkingId, nowMs);
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
export async function replayBoxLogs(store: Store, parkingId: number, sinceMs: number, nowMs: number): Promise<Replay> {
  const parking = await findParking(store, parkingId);
  if (parking.forwarding_url === null || parking.forwarding_expose !== 1) {
    throw refused(
      `parking ${parkingId} does not forward its box logs: set a URL with --expose true first (admin parking forwarding)`,
    );
  }
  if (sinceMs > nowMs) throw refused(`--since ${new Date(sinceMs).toISOString()} is in the future`);
  const queued = await new OutboxRepository(store).replay(
    parkingId,
    parking.forwarding_url,
    sinceMs,
    parking.forwarding_unverified === 1,
    nowMs,
  );
  return { parking_id: parkingId, url: parking.forwarding_url, since: new Date(sinceMs).toISOString(), queued };
}
