// Many boxes at once for the simulator's fleet mode. Half entrance, half
// exit; one transaction, so a failure leaves no half-made fleet. A parking
// holds at most 32 boxes (the protocol's module list), so a larger fleet
// needs `createParkings`: new parkings like the first one.
import { provisioningFile, type ProvisioningFile } from '../../lib/provisioning-file.js';
import { hashMqttPassword, randomKeyHex, randomSecret } from '../auth/index.js';
import type { Executor, Store } from '../db/store.js';
import { lockBoxRegistry } from './add.js';
import { conflict, notFound } from '../http/domain-error.js';
import { freshParkingKeys, ParkingRepository, type ParkingRow } from '../parkings/index.js';
import { BoxRepository, DEFAULT_MIN_BATTERY_MV, DEFAULT_SKEW_SECONDS, mqttUsernameFor } from './repository.js';
import { MAX_BOXES_PER_PARKING } from './limits.js';
import { U32_MAX, type BoxDirection } from '../../firmware-protocol/index.js';

/** Fleet module ids follow the highest one registered; on an empty table, 100000. */
const MODULE_ID_BEFORE_FIRST = 99_999;

export interface FleetRequest {
  parkingId: number;
  count: number;
  /** Spread what does not fit over new parkings like the first. */
  createParkings: boolean;
  /** The broker URL written in each file (boxes/provisioning.ts mqttUrlOf). */
  mqttUrl: string;
}

export interface ProvisionedFleet {
  files: ProvisioningFile[];
  parkingIds: number[];
}

/** The error's message names the CLI's flag: the one way to ask for it today. */
const CREATE_PARKINGS_HINT = 'use --create-parkings to spread the fleet over new parkings like it';

export async function provisionFleet(store: Store, request: FleetRequest, nowMs: number): Promise<ProvisionedFleet> {
  const { parkingId, count } = request;
  const parkings = new ParkingRepository(store);
  const boxes = new BoxRepository(store);
  // Checked before the hashes too, so that a refused request costs nothing;
  // checked again under the registry's lock below.
  const check = async (on: Executor) => {
    const first = await parkings.findById(parkingId, on);
    if (first === undefined) throw notFound(`no secured parking with id ${parkingId}`);
    const room = MAX_BOXES_PER_PARKING - (await boxes.countOf(parkingId, on));
    if (count > room && !request.createParkings) {
      throw conflict(
        `secured parking ${parkingId} has room for ${room} more boxes (at most ${MAX_BOXES_PER_PARKING}): ${CREATE_PARKINGS_HINT}`,
      );
    }
    const nextModuleId = ((await boxes.highestModuleId(on)) ?? MODULE_ID_BEFORE_FIRST) + 1;
    if (nextModuleId + count - 1 > U32_MAX) throw conflict('no room left for module ids (u32)');
    return { first, room, nextModuleId };
  };
  await check(store.kysely);
  // Keys and password hashes first, outside the transaction: 0.1 ms a hash
  // is 10 s for the largest fleet, too long to hold the write lock while an
  // API shares the file (its writes would wait out busy_timeout and fail).
  const secrets = Array.from({ length: count }, () => {
    const password = randomSecret(24);
    return { boxKey: randomKeyHex(), password, mqttPasswordHash: hashMqttPassword(password) };
  });
  const files: ProvisioningFile[] = [];
  const parkingIds: number[] = [];
  await store.kysely.transaction().execute(async (trx) => {
    // Module ids and the parkings' room read under the lock (api/boxes/add.ts).
    await lockBoxRegistry(trx, store.dialect);
    const { first, room, nextModuleId } = await check(trx);
    let parking: ParkingRow = first;
    let free = room;
    parkingIds.push(parking.id);
    for (let index = 0; index < count; index++) {
      if (free === 0) {
        const id = await parkings.insert(
          {
            name: `${first.name} (fleet ${parkingIds.length + 1})`,
            description: first.description,
            currency: first.currency,
            pricePerHourMinor: first.price_per_hour_minor,
            maxDurationMinutes: first.max_duration_minutes,
            tries: first.tries,
            isOnline: first.is_online === 1,
            // Like the first parking, its access mode included; its own fresh keys.
            keys: freshParkingKeys(first.access_mode),
          },
          nowMs,
          trx,
        );
        parking = (await parkings.findById(id, trx)) ?? first;
        parkingIds.push(id);
        free = MAX_BOXES_PER_PARKING;
      }
      const moduleId = nextModuleId + index;
      const direction: BoxDirection = index % 2 === 0 ? 'entrance' : 'exit';
      const macAddress = fleetMac(moduleId);
      if ((await boxes.findByMac(macAddress, trx)) !== undefined)
        throw conflict(`MAC address ${macAddress} is already registered`);
      const { boxKey, password, mqttPasswordHash } = secrets[index] as (typeof secrets)[number];
      await boxes.insert(
        // Played by `parkbench sim --fleet`: simulated.
        { moduleId, parkingId: parking.id, direction, macAddress, boxKey, mqttPasswordHash, simulated: true },
        nowMs,
        trx,
      );
      free--;
      // Field for field what `box provision` gives each box (lib/provisioning-file.ts);
      // the skew and battery threshold are the table's defaults the insert left.
      files.push(
        provisioningFile(
          {
            module_id: moduleId,
            parking_id: parking.id,
            direction,
            mac_address: macAddress,
            box_key: boxKey,
            skew_seconds: DEFAULT_SKEW_SECONDS,
            min_battery_mv: DEFAULT_MIN_BATTERY_MV,
          },
          parking,
          { url: request.mqttUrl, username: mqttUsernameFor(moduleId), password },
        ),
      );
    }
  });
  return { files, parkingIds };
}

/** A locally administered unicast MAC made of the module id, so two fleet
 * boxes never share one. */
function fleetMac(moduleId: number): string {
  const bytes = [
    0x02,
    0x46,
    (moduleId >>> 24) & 0xff,
    (moduleId >>> 16) & 0xff,
    (moduleId >>> 8) & 0xff,
    moduleId & 0xff,
  ];
  return bytes.map((byte) => byte.toString(16).padStart(2, '0').toUpperCase()).join(':');
}
