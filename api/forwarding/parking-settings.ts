// Where a parking's box logs are forwarded (spec section 6): the URL, on or
// off, unverified logs too or not, and the Standard Webhooks signing secret:
// made once, shown once, rotated with an overlap.
import type { Executor, Store } from '../db/store.js';
import { notFound, refused } from '../http/domain-error.js';
import { newWebhookSecret } from './signature.js';
import { MAX_OVERLAP_HOURS } from './secret-overlap.js';
import { ParkingRepository, type ParkingRow } from '../parkings/index.js';

export interface ForwardingChange {
  url: string;
  expose: boolean;
  /** Kept as it is when not given. */
  forwardUnverified?: boolean;
}

export interface ForwardingSetting {
  parking_id: number;
  url: string | null;
  expose: boolean;
  forward_unverified: boolean;
  /** The secret, when this call made it (the first setting, a rotation);
   * null otherwise: it is shown once and never again. */
  forwarding_secret: string | null;
  /** Until when the secret a rotation replaced signs too (ISO), or null. */
  previous_secret_until: string | null;
}

/** The parking, locked until the transaction ends on PostgreSQL (SQLite's
 * write transaction holds the file's lock from its BEGIN IMMEDIATE): of two
 * changes at once the second reads the secret the first wrote, so a secret
 * shown once is the one stored. */
async function lockParking(store: Store, on: Executor, parkingId: number): Promise<ParkingRow> {
  const query = on.selectFrom('secured_parkings').selectAll().where('id', '=', parkingId);
  const parking = await store.lockForUpdate(query).executeTakeFirst();
  if (!parking) throw notFound(`no secured parking with id ${parkingId}`);
  return parking;
}

async function findParking(parkings: ParkingRepository, on: Executor, parkingId: number): Promise<ParkingRow> {
  const parking = await parkings.findById(parkingId, on);
  if (!parking) throw notFound(`no secured parking with id ${parkingId}`);
  return parking;
}

function settingOf(parking: ParkingRow, shownSecret: string | null, nowMs: number): ForwardingSetting {
  const until = parking.forwarding_previous_secret_until;
  return {
    parking_id: parking.id,
    url: parking.forwarding_url,
    expose: parking.forwarding_expose === 1,
    forward_unverified: parking.forwarding_unverified === 1,
    forwarding_secret: shownSecret,
    previous_secret_until:
      parking.forwarding_previous_secret !== null && until !== null && until > nowMs
        ? new Date(until).toISOString()
        : null,
  };
}

export function setForwarding(
  store: Store,
  parkingId: number,
  change: ForwardingChange,
  nowMs: number,
): Promise<ForwardingSetting> {
  const parkings = new ParkingRepository(store);
  return store.kysely.transaction().execute(async (trx) => {
    const parking = await lockParking(store, trx, parkingId);
    // The secret is kept across changes of URL, so a receiver keeps verifying.
    const made = parking.forwarding_secret === null ? newWebhookSecret() : null;
    const forwardUnverified = change.forwardUnverified ?? parking.forwarding_unverified === 1;
    await parkings.setForwarding(
      parkingId,
      change.url,
      change.expose,
      made ?? parking.forwarding_secret ?? '',
      { forwardUnverified },
      trx,
    );
    return settingOf(await findParking(parkings, trx, parkingId), made, nowMs);
  });
}

/**
 * A new secret signs from now on; the one it replaces signs every delivery
 * too for `overlapHours` (0: not at all), so a receiver can switch without
 * refusing a delivery. A parking that never had a secret just gets one.
 */
export async function rotateForwardingSecret(
  store: Store,
  parkingId: number,
  overlapHours: number,
  nowMs: number,
): Promise<ForwardingSetting> {
  if (!Number.isInteger(overlapHours) || overlapHours < 0 || overlapHours > MAX_OVERLAP_HOURS) {
    throw refused(`the overlap must be 0 to ${MAX_OVERLAP_HOURS} hours, got ${overlapHours}`);
  }
  const parkings = new ParkingRepository(store);
  return store.kysely.transaction().execute(async (trx) => {
    const parking = await lockParking(store, trx, parkingId);
    const secret = newWebhookSecret();
    const previous =
      parking.forwarding_secret !== null && overlapHours > 0
        ? { secret: parking.forwarding_secret, until: nowMs + overlapHours * 3_600_000 }
        : null;
    await parkings.setForwardingSecret(parkingId, secret, previous, trx);
    return settingOf(await findParking(parkings, trx, parkingId), secret, nowMs);
  });
}
