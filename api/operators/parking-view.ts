// What an operator may read back of a parking (`admin parking show`): its
// settings, its access mode with the issuer public keys (current, previous
// and the next one being installed), and its boxes. No secret: neither the
// parking key nor any private key (those go to boxes only, through
// provisioning files).
import type { Store } from '../db/store.js';
import { notFound } from '../http/domain-error.js';
import { BoxRepository } from '../boxes/index.js';
import type { BoxDirection } from '../../firmware-protocol/index.js';
import { type AccessMode, formatMinorUnits, ParkingRepository, type ParkingRow } from '../parkings/index.js';

export interface ParkingView {
  id: number;
  name: string;
  description: string | null;
  currency: string;
  price_per_hour: string;
  max_duration_minutes: number;
  tries: number;
  is_online: boolean;
  access_mode: AccessMode;
  /** 128 hex digits (X || Y): what smart keys are signed with now. */
  issuer_public_key: string | null;
  /** Still on the boxes as issuer_key_previous after a rotation. */
  issuer_previous_public_key: string | null;
  /** Being installed on the boxes (set-access or rotate-issuer under way). */
  issuer_next_public_key: string | null;
  boxes: { module_id: number; direction: BoxDirection; mac_address: string }[];
}

export async function parkingView(store: Store, id: number): Promise<ParkingView> {
  const parking = await new ParkingRepository(store).findById(id);
  if (!parking) throw notFound(`no secured parking with id ${id}`);
  return {
    ...parkingSettings(parking),
    boxes: (await new BoxRepository(store).listOfParking(id)).map((box) => ({
      module_id: box.module_id,
      direction: box.direction,
      mac_address: box.mac_address,
    })),
  };
}

/** A parking's row as shown (no secret), without its boxes. */
export function parkingSettings(parking: ParkingRow): Omit<ParkingView, 'boxes'> {
  return {
    id: parking.id,
    name: parking.name,
    description: parking.description,
    currency: parking.currency,
    price_per_hour: formatMinorUnits(parking.price_per_hour_minor),
    max_duration_minutes: parking.max_duration_minutes,
    tries: parking.tries,
    is_online: parking.is_online === 1,
    access_mode: parking.access_mode,
    issuer_public_key: parking.issuer_public_key,
    issuer_previous_public_key: parking.issuer_previous_public_key,
    issuer_next_public_key: parking.issuer_next_public_key,
  };
}
