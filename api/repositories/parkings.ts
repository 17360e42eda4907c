// Secured parkings. Money in integer minor units; keys as 32 hex digits.
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
  parking_key: string;
  parking_key_next: string | null;
  forwarding_url: string | null;
  forwarding_expose: number;
  forwarding_secret: string | null;
  /** 1: unverified box logs are forwarded too (each record says `verified`). */
  forwarding_unverified: number;
}

export interface NewParking {
  name: string;
  description: string | null;
  currency: string;
  pricePerHourMinor: number;
  maxDurationMinutes: number;
  tries: number;
  isOnline: boolean;
  parkingKey: string;
}

export class ParkingRepository {
  private readonly byId;
  private readonly insertRow;
  private readonly forwardingUpdate;

  constructor(db: Db) {
    this.byId = db.prepare<[number], ParkingRow>('SELECT * FROM secured_parkings WHERE id = ?');
    this.insertRow = db.prepare<[string, string | null, string, number, number, number, number, string, number]>(
      `INSERT INTO secured_parkings (name, description, currency, price_per_hour_minor, max_duration_minutes, tries, is_online, parking_key, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.forwardingUpdate = db.prepare<[string, number, string, number, number]>(
      'UPDATE secured_parkings SET forwarding_url = ?, forwarding_expose = ?, forwarding_secret = ?, forwarding_unverified = ? WHERE id = ?',
    );
  }

  findById(id: number): ParkingRow | undefined {
    return this.byId.get(id);
  }

  insert(parking: NewParking, nowMs: number): number {
    const result = this.insertRow.run(
      parking.name,
      parking.description,
      parking.currency,
      parking.pricePerHourMinor,
      parking.maxDurationMinutes,
      parking.tries,
      parking.isOnline ? 1 : 0,
      parking.parkingKey,
      nowMs,
    );
    return Number(result.lastInsertRowid);
  }

  /** Unverified box logs stay home unless `forwardUnverified` says otherwise. */
  setForwarding(id: number, url: string, expose: boolean, secret: string, options: { forwardUnverified?: boolean } = {}): void {
    this.forwardingUpdate.run(url, expose ? 1 : 0, secret, options.forwardUnverified === true ? 1 : 0, id);
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
