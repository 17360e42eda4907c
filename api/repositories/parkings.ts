// Secured parkings. Money in integer minor units; parking keys as 32 hex
// digits, issuer keys as hex (docs/protocol.md, Keys; migration 8).
import type { Db } from '../db/open.js';

export interface ParkingRow {
  id: number;
  name: string;
  description: string | null;
  currency: string;
  price_per_hour_minor: number;
  max_duration_minutes: number;
  tries: number;
  is_online: number;
  is_active: number;
  access_mode: AccessMode;
  /** K_park: set for a sealed parking; null for a signed one created signed. */
  parking_key: string | null;
  parking_key_next: string | null;
  /** The P-256 scalar (64 hex) smart keys are signed with; never leaves the database. */
  issuer_private_key: string | null;
  /** X || Y (128 hex) of issuer_private_key. */
  issuer_public_key: string | null;
  /** The key boxes keep as issuer_key_previous after a rotation. */
  issuer_previous_public_key: string | null;
  /** A pair being installed on the boxes (SET_ISSUER) that signs nothing yet. */
  issuer_next_private_key: string | null;
  issuer_next_public_key: string | null;
  forwarding_url: string | null;
  forwarding_expose: number;
  /** The parking's Standard Webhooks secret (whsec_..., or an older one, api/forwarding/signature.ts). */
  forwarding_secret: string | null;
  /** The secret a rotation replaced: it signs too until forwarding_previous_secret_until (ms). */
  forwarding_previous_secret: string | null;
  forwarding_previous_secret_until: number | null;
  /** 1: unverified box logs are forwarded too (each record says `verified`). */
  forwarding_unverified: number;
}

/** docs/protocol.md, Keys: access commands sealed under K_park (version 1
 * firmware) or signed by the parking's issuer key pair. */
export type AccessMode = 'sealed' | 'signed';

/** The keys a new parking starts with. */
export type NewParkingKeys =
  | { accessMode: 'sealed'; parkingKey: string }
  | { accessMode: 'signed'; issuerPrivateKey: string; issuerPublicKey: string };

export interface NewParking {
  name: string;
  description: string | null;
  currency: string;
  pricePerHourMinor: number;
  maxDurationMinutes: number;
  tries: number;
  isOnline: boolean;
  keys: NewParkingKeys;
}

export class ParkingRepository {
  private readonly byId;
  private readonly insertRow;
  private readonly forwardingUpdate;
  private readonly secretRotation;

  constructor(db: Db) {
    this.byId = db.prepare<[number], ParkingRow>('SELECT * FROM secured_parkings WHERE id = ?');
    this.insertRow = db.prepare<
      [
        string,
        string | null,
        string,
        number,
        number,
        number,
        number,
        AccessMode,
        string | null,
        string | null,
        string | null,
        number,
      ]
    >(
      `INSERT INTO secured_parkings (name, description, currency, price_per_hour_minor, max_duration_minutes, tries, is_online,
         access_mode, parking_key, issuer_private_key, issuer_public_key, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.forwardingUpdate = db.prepare<[string, number, string, number, number]>(
      'UPDATE secured_parkings SET forwarding_url = ?, forwarding_expose = ?, forwarding_secret = ?, forwarding_unverified = ? WHERE id = ?',
    );
    this.secretRotation = db.prepare<[string, string | null, number | null, number]>(
      'UPDATE secured_parkings SET forwarding_secret = ?, forwarding_previous_secret = ?, forwarding_previous_secret_until = ? WHERE id = ?',
    );
  }

  findById(id: number): ParkingRow | undefined {
    return this.byId.get(id);
  }

  insert(parking: NewParking, nowMs: number): number {
    const { keys } = parking;
    const result = this.insertRow.run(
      parking.name,
      parking.description,
      parking.currency,
      parking.pricePerHourMinor,
      parking.maxDurationMinutes,
      parking.tries,
      parking.isOnline ? 1 : 0,
      keys.accessMode,
      keys.accessMode === 'sealed' ? keys.parkingKey : null,
      keys.accessMode === 'signed' ? keys.issuerPrivateKey : null,
      keys.accessMode === 'signed' ? keys.issuerPublicKey : null,
      nowMs,
    );
    return Number(result.lastInsertRowid);
  }

  /** Unverified box logs stay home unless `forwardUnverified` says otherwise. */
  setForwarding(
    id: number,
    url: string,
    expose: boolean,
    secret: string,
    options: { forwardUnverified?: boolean } = {},
  ): void {
    this.forwardingUpdate.run(url, expose ? 1 : 0, secret, options.forwardUnverified === true ? 1 : 0, id);
  }

  /** A new forwarding secret; `previous` keeps signing until `previousUntil` (ms), or none. */
  setForwardingSecret(id: number, secret: string, previous: { secret: string; until: number } | null): void {
    this.secretRotation.run(secret, previous?.secret ?? null, previous?.until ?? null, id);
  }
}

/** "2.50" -> 250; undefined when not a non-negative decimal with at most 2 decimals. */
export function parseMinorUnits(price: string): number | undefined {
  const match = /^(\d{1,9})(?:\.(\d{1,2}))?$/.exec(price.trim());
  if (!match) return undefined;
  return Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
}

/** 250 -> "2.50". */
export function formatMinorUnits(minor: number): string {
  return `${Math.trunc(minor / 100)}.${String(minor % 100).padStart(2, '0')}`;
}
