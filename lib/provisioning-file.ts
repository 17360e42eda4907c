// The provisioning file (docs/protocol.md, "Provisioning file"): what a box
// is given, as JSON, field for field and in the document's order. One module
// for its type, its writer rule and its reader: the service builds it
// (api/boxes/provisioning.ts for `admin box provision`, api/boxes/fleet.ts),
// the simulator, the conformance suite and the CLI read and check it
// (parseProvisioning, loadProvisioningFile) without importing api/.
//
// Which keys a box of a parking gets, from what the service holds (hex):
// - parking_key, parking_key_next: K_park and the key being rotated in, for a
//   sealed parking; null for a signed parking (its boxes hold no K_park, so a
//   box taken apart yields nothing that opens another box);
// - issuer_key = issuer_next_public_key ?? issuer_public_key: a box provisioned
//   while a new pair is being installed (SET_ISSUER) starts with the new key,
//   as the boxes already told will hold it;
// - issuer_key_previous = issuer_public_key when a next pair is being
//   installed (the key that still signs smart keys), else
//   issuer_previous_public_key (kept until no key it signed is valid);
// - a sealed parking's file carries its issuer keys by the same rule (null
//   when it has none, as before it moves to signed).
// Public keys only: an issuer's private key never goes into a file.
import { readFile } from 'node:fs/promises';
import { DEFAULT_SKEW_SECONDS, U32_MAX, isIssuerPublicKey, type BoxDirection } from '../firmware-protocol/index.js';
import { messageOf } from './message-of.js';
import { isMacAddress } from './wire-patterns.js';

/** What a file may leave out, and what a new box of the service gets (the
 * boxes table's defaults, api/db/migrations/001-client-apps-drivers-tokens-parkings-boxes-demo.ts): docs/protocol.md, step 7.
 * The skew is the protocol's own default. */
export { DEFAULT_SKEW_SECONDS };
export const DEFAULT_MIN_BATTERY_MV = 3300;

export interface ProvisioningFile {
  module_id: number;
  parking_id: number;
  direction: BoxDirection;
  mac_address: string;
  /** 32 hex digits, or null (a signed parking). */
  parking_key: string | null;
  parking_key_next: string | null;
  /** 128 hex digits (X || Y), or null. */
  issuer_key: string | null;
  issuer_key_previous: string | null;
  box_key: string;
  skew_seconds: number;
  min_battery_mv: number;
  mqtt: { url: string; username: string; password: string };
}

/** The keys of a parking as the service holds them, public ones only (a
 * parking row of api/parkings/repository.ts fits). */
export interface ParkingKeysForFile {
  readonly access_mode: 'sealed' | 'signed';
  readonly parking_key: string | null;
  readonly parking_key_next: string | null;
  readonly issuer_public_key: string | null;
  readonly issuer_previous_public_key: string | null;
  readonly issuer_next_public_key: string | null;
}

export type FileKeys = Pick<
  ProvisioningFile,
  'parking_key' | 'parking_key_next' | 'issuer_key' | 'issuer_key_previous'
>;

/** The four key fields of a box's file, by the rule above. */
export function fileKeysOf(parking: ParkingKeysForFile): FileKeys {
  const installing = parking.issuer_next_public_key !== null;
  const issuerKey = parking.issuer_next_public_key ?? parking.issuer_public_key;
  const issuerKeyPrevious = installing ? parking.issuer_public_key : parking.issuer_previous_public_key;
  const signed = parking.access_mode === 'signed';
  return {
    parking_key: signed ? null : parking.parking_key,
    parking_key_next: signed ? null : parking.parking_key_next,
    issuer_key: issuerKey,
    // docs/protocol.md, step 5: only issuer_key_previous may be none; never a previous key alone.
    issuer_key_previous: issuerKey === null ? null : issuerKeyPrevious,
  };
}

export interface BoxForFile {
  readonly module_id: number;
  readonly parking_id: number;
  readonly direction: BoxDirection;
  readonly mac_address: string;
  readonly box_key: string;
  readonly skew_seconds: number;
  readonly min_battery_mv: number;
}

/** A box's provisioning file, its fields in the document's order. */
export function provisioningFile(
  box: BoxForFile,
  parking: ParkingKeysForFile,
  mqtt: ProvisioningFile['mqtt'],
): ProvisioningFile {
  const keys = fileKeysOf(parking);
  return {
    module_id: box.module_id,
    parking_id: box.parking_id,
    direction: box.direction,
    mac_address: box.mac_address,
    parking_key: keys.parking_key,
    parking_key_next: keys.parking_key_next,
    issuer_key: keys.issuer_key,
    issuer_key_previous: keys.issuer_key_previous,
    box_key: box.box_key,
    skew_seconds: box.skew_seconds,
    min_battery_mv: box.min_battery_mv,
    mqtt,
  };
}

// The reader: a file read and checked field by field, so a bad file is one
// clear line naming the field, never a crash deep inside the box.

/** The `mqtt` object of a file, checked: where and as whom the box logs in to
 * the broker (what the broker then knows of it is an api/mqtt/acl.ts MqttAccount). */
export interface MqttLogin {
  readonly url: string;
  readonly username: string;
  readonly password: string;
}

/** A checked provisioning file, as a box holds it (keys as bytes). */
export interface Provisioning {
  readonly moduleId: number;
  readonly parkingId: number;
  readonly direction: BoxDirection;
  readonly macAddress: string;
  /** K_park; null on a box of a signed parking (docs/protocol.md, Provisioning
   * file: "A file of a signed parking has `parking_key` null"). */
  readonly parkingKey: Buffer | null;
  /** Tried after parkingKey, so a parking key can be rotated. */
  readonly parkingKeyNext: Buffer | null;
  /** `issuer_key`: the issuer public key (64 bytes X || Y) a new box starts
   * with, or null. The box's state file wins once it holds one. */
  readonly issuerKey?: Buffer | null;
  /** `issuer_key_previous`: 64 bytes, or null (or left out) for none. */
  readonly issuerKeyPrevious?: Buffer | null;
  readonly boxKey: Buffer;
  readonly skewSeconds: number;
  readonly minBatteryMv: number;
  /** Absent when the box is reached only over serial or BLE. */
  readonly mqtt: MqttLogin | null;
}

/** A sealed parking's box: it holds K_park. */
export type SealedProvisioning = Provisioning & { readonly parkingKey: Buffer };

export class ProvisioningError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(field === '' ? message : `${field}: ${message}`);
    this.name = 'ProvisioningError';
  }
}

const KEY_HEX = /^[0-9a-f]{32}$/i;
const ISSUER_KEY_HEX = /^[0-9a-f]{128}$/i;

/** Checks a parsed provisioning document; `where` prefixes field names
 * (`[3].box_key` for the fourth box of a fleet file). */
export function parseProvisioning(document: unknown, where = ''): Provisioning {
  const fields = asObject(document, where);
  const field = (name: string): string => (where === '' ? name : `${where}.${name}`);
  const mqtt = fields.mqtt;
  const issuerKey = optional(fields.issuer_key, field('issuer_key'), issuerPublicKey);
  const issuerKeyPrevious = optional(fields.issuer_key_previous, field('issuer_key_previous'), issuerPublicKey);
  // docs/protocol.md, step 5: only issuer_key_previous may be none; a box never holds a previous key alone.
  if (issuerKey === null && issuerKeyPrevious !== null)
    throw new ProvisioningError(field('issuer_key_previous'), 'must be null when issuer_key is null');
  return {
    moduleId: integer(fields.module_id, field('module_id'), 0, U32_MAX),
    parkingId: integer(fields.parking_id, field('parking_id'), 0, U32_MAX),
    direction: direction(fields.direction, field('direction')),
    macAddress: macAddress(fields.mac_address, field('mac_address')),
    parkingKey: optional(fields.parking_key, field('parking_key'), key),
    parkingKeyNext: optional(fields.parking_key_next, field('parking_key_next'), key),
    issuerKey,
    issuerKeyPrevious,
    boxKey: key(fields.box_key, field('box_key')),
    skewSeconds:
      fields.skew_seconds === undefined
        ? DEFAULT_SKEW_SECONDS
        : integer(fields.skew_seconds, field('skew_seconds'), 0, U32_MAX),
    minBatteryMv:
      fields.min_battery_mv === undefined
        ? DEFAULT_MIN_BATTERY_MV
        : integer(fields.min_battery_mv, field('min_battery_mv'), 0, 0xffff),
    mqtt: mqtt === null || mqtt === undefined ? null : mqttLogin(mqtt, field('mqtt')),
  };
}

/** Reads and checks a provisioning file. */
export async function loadProvisioningFile(path: string): Promise<Provisioning> {
  return parseProvisioning(await readJsonFile(path));
}

/** Reads a JSON file, turning "missing" and "not JSON" into one-line errors. */
export async function readJsonFile(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ProvisioningError(
      '',
      code === 'ENOENT' ? `${path}: no such file` : `${path}: cannot be read (${code ?? String(error)})`,
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ProvisioningError('', `${path}: not valid JSON (${messageOf(error)})`);
  }
}

function asObject(value: unknown, name: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ProvisioningError(name, 'must be a JSON object');
  }
  return value as Record<string, unknown>;
}

function integer(value: unknown, name: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ProvisioningError(name, `must be an integer from ${min} to ${max}`);
  }
  return value;
}

function direction(value: unknown, name: string): BoxDirection {
  if (value !== 'entrance' && value !== 'exit') throw new ProvisioningError(name, 'must be "entrance" or "exit"');
  return value;
}

function macAddress(value: unknown, name: string): string {
  if (typeof value !== 'string' || !isMacAddress(value.toUpperCase())) {
    throw new ProvisioningError(name, 'must be a MAC address like 00:07:80:AA:BB:01');
  }
  return value.toUpperCase();
}

function key(value: unknown, name: string): Buffer {
  if (typeof value !== 'string' || !KEY_HEX.test(value))
    throw new ProvisioningError(name, 'must be 32 hex digits (a 16-byte key)');
  return Buffer.from(value, 'hex');
}

/** A field that may be null or left out (then null). */
function optional<T>(value: unknown, name: string, parse: (value: unknown, name: string) => T): T | null {
  return value === null || value === undefined ? null : parse(value, name);
}

function issuerPublicKey(value: unknown, name: string): Buffer {
  if (typeof value !== 'string' || !ISSUER_KEY_HEX.test(value))
    throw new ProvisioningError(name, 'must be 128 hex digits (a P-256 public key X || Y) or null');
  const publicKey = Buffer.from(value, 'hex');
  if (!isIssuerPublicKey(publicKey)) throw new ProvisioningError(name, 'is not a point on P-256');
  return publicKey;
}

function mqttLogin(value: unknown, name: string): MqttLogin {
  const fields = asObject(value, name);
  const text = (field: string): string => {
    const item = fields[field];
    if (typeof item !== 'string' || item === '')
      throw new ProvisioningError(`${name}.${field}`, 'must be a non-empty string');
    return item;
  };
  const url = text('url');
  if (!/^(mqtts?|wss?|tcp):\/\//.test(url))
    throw new ProvisioningError(`${name}.url`, 'must be an mqtt://, mqtts://, ws:// or wss:// URL');
  return { url, username: text('username'), password: text('password') };
}
