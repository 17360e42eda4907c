// Boxes (access-point modules) of the secured parkings.
import type { Db } from '../db/open.js';

export type Direction = 'entrance' | 'exit';

export interface BoxRow {
  id: number;
  module_id: number;
  parking_id: number;
  direction: Direction;
  mac_address: string;
  box_key: string;
  mqtt_username: string;
  mqtt_password_hash: string;
  skew_seconds: number;
  min_battery_mv: number;
  next_control_seq: number;
}

export interface NewBox {
  moduleId: number;
  parkingId: number;
  direction: Direction;
  macAddress: string;
  boxKey: string;
  mqttPasswordHash: string;
}

/** PROTOCOL.md: an ACCESS frame lists at most 32 modules, so a parking holds at most 32 boxes. */
export const MAX_BOXES_PER_PARKING = 32;

export function mqttUsernameFor(moduleId: number): string {
  return `box-${moduleId}`;
}

export class BoxRepository {
  private readonly byModule;
  private readonly byMac;
  private readonly ofParking;
  private readonly countOfParking;
  private readonly insertRow;
  private readonly passwordUpdate;

  constructor(db: Db) {
    this.byModule = db.prepare<[number], BoxRow>('SELECT * FROM boxes WHERE module_id = ?');
    this.byMac = db.prepare<[string], BoxRow>('SELECT * FROM boxes WHERE mac_address = ?');
    this.ofParking = db.prepare<[number], BoxRow>('SELECT * FROM boxes WHERE parking_id = ? ORDER BY module_id');
    this.countOfParking = db.prepare<[number], { count: number }>('SELECT count(*) AS count FROM boxes WHERE parking_id = ?');
    this.insertRow = db.prepare<[number, number, string, string, string, string, string, number]>(
      `INSERT INTO boxes (module_id, parking_id, direction, mac_address, box_key, mqtt_username, mqtt_password_hash, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.passwordUpdate = db.prepare<[string, number]>('UPDATE boxes SET mqtt_password_hash = ? WHERE module_id = ?');
  }

  findByModuleId(moduleId: number): BoxRow | undefined {
    return this.byModule.get(moduleId);
  }

  findByMac(mac: string): BoxRow | undefined {
    return this.byMac.get(mac);
  }

  listOfParking(parkingId: number): BoxRow[] {
    return this.ofParking.all(parkingId);
  }

  countOf(parkingId: number): number {
    return this.countOfParking.get(parkingId)?.count ?? 0;
  }

  insert(box: NewBox, nowMs: number): number {
    const result = this.insertRow.run(
      box.moduleId,
      box.parkingId,
      box.direction,
      box.macAddress,
      box.boxKey,
      mqttUsernameFor(box.moduleId),
      box.mqttPasswordHash,
      nowMs,
    );
    return Number(result.lastInsertRowid);
  }

  setMqttPasswordHash(moduleId: number, hash: string): void {
    this.passwordUpdate.run(hash, moduleId);
  }
}
