// Registering a box of a parking with a fresh box key and MQTT password (the
// password is returned once; only its hash is stored).
import { hashMqttPassword, randomKeyHex, randomSecret } from '../auth/index.js';
import { CompiledQuery } from 'kysely';
import type { Dialect, Executor, Store } from '../db/store.js';
import { conflict, notFound } from '../http/domain-error.js';
import { MAX_BOXES_PER_PARKING } from './limits.js';
import { BoxRepository, mqttUsernameFor, type BoxRow } from './repository.js';
import type { BoxDirection } from '../../firmware-protocol/index.js';
import { ParkingRepository } from '../parkings/index.js';

export interface NewBoxInput {
  parkingId: number;
  moduleId: number;
  macAddress: string;
  direction: BoxDirection;
  /** Played by parkbench's simulator (`parkbench start` runs the demo parking's); a box is real unless said so. */
  simulated?: boolean;
}

/** The stored box as the operator gets it once: its MQTT password in clear instead of its hash. */
export type AddedBox = Pick<
  BoxRow,
  'module_id' | 'parking_id' | 'direction' | 'mac_address' | 'box_key' | 'mqtt_username'
> & { mqtt_password: string; simulated: boolean };

/** The first key of pg_advisory_xact_lock(int, int) for box registrations ("pkbx"). */
const BOX_REGISTRY_LOCK_CLASS = 0x706b6278;

/**
 * Inside a write transaction: waits until no other process registers boxes.
 * The checks of a registration (the next module id, the highest + 1 over all
 * boxes; the 32 boxes of a parking; a free module id and MAC) read rows a
 * concurrent registration is about to write, and the module id is global, so
 * a row lock on the parking would not serialize two fleets of two parkings:
 * one transaction-scoped advisory lock on PostgreSQL serializes every box
 * registration (an operator's action, rare) and the checks hold until the
 * commit. On SQLite the write transaction's BEGIN IMMEDIATE does the same
 * (api/db/kysely-sqlite.ts). A retry on the unique violation would cover the
 * module ids but not the limit of a parking, which no constraint states.
 */
export async function lockBoxRegistry(on: Executor, dialect: Dialect): Promise<void> {
  if (dialect === 'postgres')
    await on.executeQuery(CompiledQuery.raw('SELECT pg_advisory_xact_lock($1, 0)', [BOX_REGISTRY_LOCK_CLASS]));
}

export async function addBox(store: Store, input: NewBoxInput, nowMs: number): Promise<AddedBox> {
  // Outside the transaction: the hash (0.1 ms) need not hold the lock.
  const boxKey = randomKeyHex();
  const mqttPassword = randomSecret(24);
  const mqttPasswordHash = hashMqttPassword(mqttPassword);
  const boxes = new BoxRepository(store);
  const parkings = new ParkingRepository(store);
  await store.kysely.transaction().execute(async (trx) => {
    await lockBoxRegistry(trx, store.dialect);
    if (!(await parkings.findById(input.parkingId, trx)))
      throw notFound(`no secured parking with id ${input.parkingId}`);
    if (await boxes.findByModuleId(input.moduleId, trx))
      throw conflict(`module id ${input.moduleId} is already registered`);
    if (await boxes.findByMac(input.macAddress, trx))
      throw conflict(`MAC address ${input.macAddress} is already registered`);
    if ((await boxes.countOf(input.parkingId, trx)) >= MAX_BOXES_PER_PARKING) {
      throw conflict(
        `secured parking ${input.parkingId} already has ${MAX_BOXES_PER_PARKING} boxes, the protocol's limit`,
      );
    }
    await boxes.insert({ ...input, boxKey, mqttPasswordHash }, nowMs, trx);
  });
  return {
    module_id: input.moduleId,
    parking_id: input.parkingId,
    direction: input.direction,
    mac_address: input.macAddress,
    box_key: boxKey,
    mqtt_username: mqttUsernameFor(input.moduleId),
    mqtt_password: mqttPassword,
    simulated: input.simulated === true,
  };
}
