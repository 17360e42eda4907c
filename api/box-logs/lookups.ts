// The rows a batch of box logs reads, each read once: 50 logs of one box (or
// the few hundred MQTT messages of one turn) read it once. Valid within one
// transaction: ingestion writes none of what it reads through here (boxes'
// observations and control sequences are written, but not the columns read:
// module id, parking, direction, key).
import type { BoxesSqlite, BoxRow } from '../repositories/boxes.js';
import type { ParkingsSqlite, ParkingRow } from '../repositories/parkings.js';
import type { SmartKeyRepository, SmartKeyRow } from '../repositories/smart-keys.js';
import type { UserRepository, UserRow } from '../repositories/users.js';

/** The repositories read. */
export interface LookupDeps {
  users: Pick<UserRepository, 'findById'>;
  smartKeys: Pick<SmartKeyRepository, 'findById'>;
  boxesSqlite: Pick<BoxesSqlite, 'findByModuleId'>;
  parkingsSqlite: Pick<ParkingsSqlite, 'findById'>;
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
    this.smartKey = memo((id: number) => deps.smartKeys.findById(id));
    this.box = memo((moduleId: number) => deps.boxesSqlite.findByModuleId(moduleId));
    this.parking = memo((id: number) => deps.parkingsSqlite.findById(id));
  }
}
