// The JSON of a smart key as spec 2.6 says, with its parking's name and
// state and its boxes' MAC addresses.
import type { Executor, Store } from '../db/store.js';
import { isoTime } from '../http/time.js';
import type { ParkingRow } from '../parkings/index.js';
import type { SmartKeyRow } from './repository.js';

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

/** Keys' bodies read their parkings and their boxes' MAC addresses (the
 * parkings' tables, read here in place). */
export interface SmartKeyViewDeps {
  store: Pick<Store, 'kysely'>;
}

export type KeyParking = Pick<ParkingRow, 'id' | 'name' | 'is_active' | 'is_online'>;

/** A key's body, from its row, its parking's and its boxes' MAC addresses (by module id). */
export function smartKeyBody(key: SmartKeyRow, parking: KeyParking, macs: ReadonlyMap<number, string>): SmartKeyBody {
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
