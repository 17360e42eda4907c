// The provisioning file (docs/protocol.md, "Provisioning file"): what a box
// is given, as JSON, field for field and in the document's order. The admin
// CLI writes it (cli/admin/box.ts `box provision`, cli/admin/fleet.ts);
// simulator/provisioning.ts reads and checks it (parseProvisioning).
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

export type ProvisioningDirection = 'entrance' | 'exit';

export interface ProvisioningFile {
  module_id: number;
  parking_id: number;
  direction: ProvisioningDirection;
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
 * parking row of api/repositories/parkings.ts fits). */
export interface ParkingKeysForFile {
  readonly access_mode: 'sealed' | 'signed';
  readonly parking_key: string | null;
  readonly parking_key_next: string | null;
  readonly issuer_public_key: string | null;
  readonly issuer_previous_public_key: string | null;
  readonly issuer_next_public_key: string | null;
}

export type FileKeys = Pick<ProvisioningFile, 'parking_key' | 'parking_key_next' | 'issuer_key' | 'issuer_key_previous'>;

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
  readonly direction: ProvisioningDirection;
  readonly mac_address: string;
  readonly box_key: string;
  readonly skew_seconds: number;
  readonly min_battery_mv: number;
}

/** A box's provisioning file, its fields in the document's order. */
export function provisioningFile(box: BoxForFile, parking: ParkingKeysForFile, mqtt: ProvisioningFile['mqtt']): ProvisioningFile {
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
