// Where a parking's box logs are forwarded (spec section 6): the URL, on or
// off, unverified logs too or not, and the signing secret.
import { randomSecret } from '../auth/secrets.js';
import type { Db } from '../db/open.js';
import { notFound } from '../domain-error.js';
import { ParkingRepository } from '../repositories/parkings.js';

export interface ForwardingChange {
  url: string;
  expose: boolean;
  /** Kept as it is when not given. */
  forwardUnverified?: boolean;
}

export interface ForwardingSetting {
  parking_id: number;
  url: string;
  expose: boolean;
  forward_unverified: boolean;
  forwarding_secret: string;
}

export function setForwarding(db: Db, parkingId: number, change: ForwardingChange): ForwardingSetting {
  const parkings = new ParkingRepository(db);
  const parking = parkings.findById(parkingId);
  if (!parking) throw notFound(`no secured parking with id ${parkingId}`);
  // The secret is kept across changes of URL, so a receiver keeps verifying.
  const secret = parking.forwarding_secret ?? randomSecret(32);
  const forwardUnverified = change.forwardUnverified ?? parking.forwarding_unverified === 1;
  parkings.setForwarding(parkingId, change.url, change.expose, secret, { forwardUnverified });
  return { parking_id: parkingId, url: change.url, expose: change.expose, forward_unverified: forwardUnverified, forwarding_secret: secret };
}
