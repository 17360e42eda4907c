// The rows a batch of box logs reads, each read once: 50 logs of one box (or
// the few hundred MQTT messages of one turn) read it once. Valid within one
// transaction: ingestion writes none of what it reads through here (boxes'
// observations and control sequences are written, but not the columns read:
// module id, parking, direction, key).
import type { BoxRepository, BoxRow } from '../repositories/boxes.js';
import type { ParkingRepository, ParkingRow } from '../repositories/parkings.js';
import type { SmartKeyRow, SmartKeysSqlite } from '../repositories/smart-keys.js';
import type { UserRepository, UserRow } from '../repositories/users.js';

/** The repositories read. */
export interface LookupDeps {
  users: Pick<UserRepository, 'findById'>;
  smartKeysSqlite: Pick<SmartKeysSqlite, 'findById'>;
  boxes: Pick<BoxRepository, 'findByModuleId'>;
  parkings: Pick<ParkingRepository, 'findById'>;
}

/** Memoizes a lookup, `undefined` answers included. */
export function memo<K, V>(lookup: (key: K) => V): (key: K) => V {
  const cache = new Map<K, V>();
  return (key) => {
    if (cache.has(key)) return cache.get(key) as V;
    const value = lookup(key);
    cache.set(key, value);
    return value;
  };
}

export class BoxLogLookups {
  readonly user: (id: number) => UserRow | undefined;
  readonly smartKey: (id: number) => SmartKeyRow | undefined;
  readonly box: (moduleId: number) => BoxRow | undefined;
  readonly parking: (id: number) => ParkingRow | undefined;

  constructor(deps: LookupDeps) {
    this.user = memo((id: number) => deps.users.findById(id));
    this.smartKey = memo((id: number) => deps.smartKeysSqlite.findById(id));
    this.box = memo((moduleId: number) => deps.boxes.findByModuleId(moduleId));
    this.parking = memo((id: number) => deps.parkings.findById(id));
  }
}
