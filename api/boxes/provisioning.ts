// A box's provisioning file (lib/provisioning-file.ts) with a fresh MQTT
// password: only its hash is stored, so the previous password stops working.
import { prepareFileAtomic, UnsafeTargetError, type PreparedFile } from '../../lib/atomic-file.js';
import { provisioningFile, type ProvisioningFile } from '../../lib/provisioning-file.js';
import { hashMqttPassword, randomSecret, verifyMqttPassword } from '../auth/index.js';
import type { ApiConfig } from '../config/index.js';
import type { Executor, Store } from '../db/store.js';
import { failed, notFound } from '../http/domain-error.js';
import { messageOf } from '../../lib/message-of.js';
import { BoxRepository } from './repository.js';
import { ParkingRepository } from '../parkings/index.js';

/** The broker URL a box is given: MQTT_URL, else the embedded broker's. */
export function mqttUrlOf(config: Pick<ApiConfig, 'host' | 'mqttPort' | 'mqttUrl'>): string {
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  return config.mqttUrl ?? `mqtt://${host}:${config.mqttPort}`;
}

/** A provisioning file whose password is stored only when `store` runs. */
export interface PendingProvisioning {
  file: ProvisioningFile;
  store: (on?: Executor) => Promise<void>;
}

/** Builds the provisioning file with a fresh MQTT password, stored only when
 * `store` runs (see writeProvisioning). */
export async function newProvisioning(store: Store, moduleId: number, mqttUrl: string): Promise<PendingProvisioning> {
  const boxes = new BoxRepository(store);
  const box = await boxes.findByModuleId(moduleId);
  if (!box) throw notFound(`no box with module id ${moduleId}`);
  const parking = await new ParkingRepository(store).findById(box.parking_id);
  if (!parking) throw notFound(`box ${moduleId} belongs to a missing parking ${box.parking_id}`);
  const password = randomSecret(24);
  const hash = hashMqttPassword(password);
  // Its keys by the rule of lib/provisioning-file.ts: a signed parking's box
  // gets issuer public keys and no parking key; never a private key.
  const file = provisioningFile(box, parking, { url: mqttUrl, username: box.mqtt_username, password });
  return { file, store: (on) => boxes.setMqttPasswordHash(moduleId, hash, on) };
}

/** Builds the provisioning file and stores its fresh MQTT password. */
export async function provisionBox(store: Store, moduleId: number, mqttUrl: string): Promise<ProvisioningFile> {
  const pending = await newProvisioning(store, moduleId, mqttUrl);
  await pending.store();
  return pending.file;
}

/** The provisioning file with a password given to the box before (kept by
 * `parkbench start --mqtt-url`, whose broker loaded its hash), if the stored
 * hash is still that password's; undefined otherwise (reprovisioned since,
 * or a fresh database). Nothing is stored. */
export async function provisioningWithPassword(
  store: Store,
  moduleId: number,
  mqttUrl: string,
  password: string,
): Promise<ProvisioningFile | undefined> {
  const box = await new BoxRepository(store).findByModuleId(moduleId);
  if (box === undefined || !(await verifyMqttPassword(password, box.mqtt_password_hash))) return undefined;
  const { file } = await newProvisioning(store, moduleId, mqttUrl);
  return { ...file, mqtt: { ...file.mqtt, password } };
}

/** The provisioning file as written and printed: JSON, 2 spaces, a newline. */
export function provisioningText(file: ProvisioningFile): string {
  return `${JSON.stringify(file, null, 2)}\n`;
}

/**
 * Writes the provisioning file and stores its password's hash, both or
 * neither: a box whose new password was stored but never written out would be
 * locked out. The file goes to a temporary file beside `out` (flushed, mode
 * 0600), then the hash is stored and the file renamed into place in one
 * transaction: a failed rename rolls the hash back. `out` must be a regular
 * file or a new name (lib/atomic-file.ts): anything else rejects with
 * UnsafeTargetError, nothing changed.
 */
export async function writeProvisioning(store: Store, out: string, pending: PendingProvisioning): Promise<void> {
  let prepared: PreparedFile | undefined;
  try {
    prepared = await prepareFileAtomic(out, provisioningText(pending.file), { mode: 0o600 });
    const file = prepared;
    // The body awaits only its own update; the rename is synchronous.
    await store.kysely.transaction().execute(async (trx) => {
      await pending.store(trx);
      file.commitSync();
    });
  } catch (error) {
    prepared?.discard();
    if (error instanceof UnsafeTargetError) throw error;
    throw failed(`cannot write ${out}: ${messageOf(error)} (nothing changed: the box keeps its MQTT password)`);
  }
}
