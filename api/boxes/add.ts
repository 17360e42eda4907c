// Registering a box of a parking with a fresh box key and MQTT password (the
// password is returned once; only its hash is stored).
import { randomKeyHex, randomSecret } from '../auth/secrets.js';
import type { Db } from '../db/open.js';
import { conflict, notFound } from '../domain-error.js';
import { hashMqttPassword } from '../mqtt/password-hash.js';
import { BoxRepository, MAX_BOXES_PER_PARKING, mqttUsernameFor, type BoxRow } from '../repositories/boxes.js';
import type { BoxDirection } from '../../firmware-protocol/index.js';
import { ParkingRepository } from '../repositories/parkings.js';

export interface NewBoxInput {
  parkingId: number;
  moduleId: number;
  macAddress: string;
  direction: BoxDirection;
}

/** The stored box as the operator gets it once: its MQTT password in clear instead of its hash. */
export type AddedBox = Pick<
  BoxRow,
  'module_id' | 'parking_id' | 'direction' | 'mac_address' | 'box_key' | 'mqtt_username'
> & { mqtt_password: string };

export function addBox(db: Db, input: NewBoxInput, nowMs: number): AddedBox {
  const boxes = new BoxRepository(db);
  if (!new ParkingRepository(db).findById(input.parkingId))
    throw notFound(`no secured parking with id ${input.parkingId}`);
  if (boxes.findByModuleId(input.moduleId)) throw conflict(`module id ${input.moduleId} is already registered`);
  if (boxes.findByMac(input.macAddress)) throw conflict(`MAC address ${input.macAddress} is already registered`);
  if (boxes.countOf(input.parkingId) >= MAX_BOXES_PER_PARKING) {
    throw conflict(
      `secured parking ${input.parkingId} already has ${MAX_BOXES_PER_PARKING} boxes, the protocol's limit`,
    );
  }
  const boxKey = randomKeyHex();
  const mqttPassword = randomSecret(24);
  const mqttPasswordHash = hashMqttPassword(mqttPassword);
  boxes.insert({ ...input, boxKey, mqttPasswordHash }, nowMs);
  return {
    module_id: input.moduleId,
    parking_id: input.parkingId,
    direction: input.direction,
    mac_address: input.macAddress,
    box_key: boxKey,
    mqtt_username: mqttUsernameFor(input.moduleId),
    mqtt_password: mqttPassword,
  };
}
