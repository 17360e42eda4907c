// Boxes (access-point modules) of the secured parkings.
import type { BoxDirection } from '../../firmware-protocol/index.js';
import type { Db } from '../db/open.js';

export interface BoxRow {
  id: number;
  module_id: number;
  parking_id: number;
  direction: BoxDirection;
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
  direction: BoxDirection;
  macAddress: string;
  boxKey: string;
  mqttPasswordHash: string;
}

/** docs/protocol.md, Command frame: an ACCESS frame lists at most 32 modules, so a parking holds at most 32 boxes. */
export const MAX_BOXES_PER_PARKING = 32;

/** A new box's skew_seconds and min_battery_mv: the defaults of the boxes
 * table (api/db/migrations.ts, migration 1), the same as a provisioning file's. */
export { DEFAULT_MIN_BATTERY_MV, DEFAULT_SKEW_SECONDS } from '../../lib/provisioning-file.js';

export function mqttUsernameFor(moduleId: number): string {
  return `box-${moduleId}`;
}

export class BoxRepository {
  private readonly byModule;
  private readonly byMac;
  private readonly ofParking;
  private readonly everyBox;
  private readonly countOfParking;
  private readonly highestModule;
  private readonly insertRow;
  private readonly passwordUpdate;
  private readonly observationUpdate;
  private readonly controlUpdate;
  private readonly learnedOf;

  constructor(db: Db) {
    this.byModule = db.prepare<[number], BoxRow>('SELECT * FROM boxes WHERE module_id = ?');
    this.byMac = db.prepare<[string], BoxRow>('SELECT * FROM boxes WHERE mac_address = ?');
    this.ofParking = db.prepare<[number], BoxRow>('SELECT * FROM boxes WHERE parking_id = ? ORDER BY module_id');
    this.everyBox = db.prepare<[], BoxRow>('SELECT * FROM boxes ORDER BY module_id');
    this.countOfParking = db.prepare<[number], { count: number }>(
      'SELECT count(*) AS count FROM boxes WHERE parking_id = ?',
    );
    this.highestModule = db.prepare<[], { highest: number | null }>('SELECT max(module_id) AS highest FROM boxes');
    this.insertRow = db.prepare<[number, number, string, string, string, string, string, number]>(
      `INSERT INTO boxes (module_id, parking_id, direction, mac_address, box_key, mqtt_username, mqtt_password_hash, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.passwordUpdate = db.prepare<[string, number]>('UPDATE boxes SET mqtt_password_hash = ? WHERE module_id = ?');
    this.observationUpdate = db.prepare<[number, number, number, number, number, number, number]>(
      `UPDATE boxes SET last_seen_at = ?, last_box_seq = ?, last_box_time = ?, box_time_drift_seconds = ?, battery_mv = ?
       WHERE module_id = ? AND (last_box_seq IS NULL OR last_box_seq < ?)`,
    );
    this.controlUpdate = db.prepare<[{ next: number; accepted: number | null; module: number }]>(
      `UPDATE boxes SET next_control_seq = max(next_control_seq, @next),
         last_control_seq = CASE WHEN @accepted IS NULL THEN last_control_seq ELSE max(coalesce(last_control_seq, 0), @accepted) END
       WHERE module_id = @module`,
    );
    this.learnedOf = db.prepare<[number], LearnedState>(
      'SELECT last_seen_at, last_box_seq, last_box_time, box_time_drift_seconds, battery_mv, last_control_seq, next_control_seq FROM boxes WHERE module_id = ?',
    );
  }

  findByModuleId(moduleId: number): BoxRow | undefined {
    return this.byModule.get(moduleId);
  }

  findByMac(mac: string): BoxRow | undefined {
    return this.byMac.get(mac);
  }

  listAll(): BoxRow[] {
    return this.everyBox.all();
  }

  listOfParking(parkingId: number): BoxRow[] {
    return this.ofParking.all(parkingId);
  }

  countOf(parkingId: number): number {
    return this.countOfParking.get(parkingId)?.count ?? 0;
  }

  /** The highest module id registered, or null when there is no box. */
  highestModuleId(): number | null {
    return this.highestModule.get()?.highest ?? null;
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

  /** What a verified response tells about its box; ignored when an answer
   * with a later box_seq was already seen (offline logs arrive late). */
  noteObservation(observation: BoxObservation): void {
    this.observationUpdate.run(
      observation.seenAt,
      observation.boxSeq,
      observation.boxTime,
      observation.driftSeconds,
      observation.batteryMv,
      observation.moduleId,
      observation.boxSeq,
    );
  }

  /** docs/protocol.md, after step 11: the service moves next_control_seq past any control
   * sequence echoed in a response; `accepted` (status OK) also records it as
   * the box's last accepted one. */
  noteControlSequence(moduleId: number, sequence: number, accepted: boolean): void {
    this.controlUpdate.run({ next: sequence + 1, accepted: accepted ? sequence : null, module: moduleId });
  }

  /** What the service learned of a box (null before any verified response). */
  learned(moduleId: number): LearnedState | undefined {
    return this.learnedOf.get(moduleId);
  }
}

export interface BoxObservation {
  moduleId: number;
  /** When the response was produced (the log's created_at), ms. */
  seenAt: number;
  boxSeq: number;
  /** Unix seconds. */
  boxTime: number;
  /** box_time minus the time seen, seconds. */
  driftSeconds: number;
  batteryMv: number;
}

export interface LearnedState {
  last_seen_at: number | null;
  last_box_seq: number | null;
  last_box_time: number | null;
  box_time_drift_seconds: number | null;
  battery_mv: number | null;
  last_control_seq: number | null;
  next_control_seq: number;
}
