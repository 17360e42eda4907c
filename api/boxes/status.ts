// What each box last told the service in a verified response
// (docs/protocol.md, Response frame), and its queued control commands.
import { pendingControlOf, type PendingControl } from '../control/operations.js';
import type { Db } from '../db/open.js';
import { notFound } from '../domain-error.js';
import { BoxesSqlite, type BoxRow } from '../repositories/boxes.js';
import type { BoxDirection } from '../../firmware-protocol/index.js';
import { ParkingsSqlite } from '../repositories/parkings.js';
import { BoxAvailabilitySqlite } from './availability.js';
import type { AvailabilityValue } from '../mqtt/box-availability.js';

/** When a box was last seen, its battery, how far its clock is off, its sequences. */
export interface BoxStatus {
  module_id: number;
  parking_id: number;
  direction: BoxDirection;
  last_seen_at: string | null;
  battery_mv: number | null;
  box_time_drift_seconds: number | null;
  last_box_seq: number | null;
  last_control_seq: number | null;
  next_control_seq: number;
  /** Control commands queued for the box, not answered yet (api/control/). */
  pending_control_commands: PendingControl[];
  /** True availability, as the running API derived it (api/mqtt/box-availability.ts):
   * offline when the box said so or when its gateway is offline; unknown
   * before the API has heard of it. */
  availability: AvailabilityValue;
  /** Why it is offline (`gateway gw-bench-1 offline since ...`), else null. */
  availability_reason: string | null;
  /** Since when the API holds that value (ISO time), null when unknown. */
  availability_since: string | null;
  /** The gateway the box is reached through, null for a box on MQTT itself or not known. */
  gateway_id: string | null;
}

/** One box, the boxes of one parking, or all of them. */
export interface BoxFilter {
  moduleId?: number;
  parkingId?: number;
}

export function boxStatuses(db: Db, filter: BoxFilter): BoxStatus[] {
  const boxes = new BoxesSqlite(db);
  const availabilities = new BoxAvailabilitySqlite(db);
  let rows: BoxRow[];
  if (filter.moduleId !== undefined) {
    const box = boxes.findByModuleId(filter.moduleId);
    if (!box) throw notFound(`no box with module id ${filter.moduleId}`);
    rows = [box];
  } else if (filter.parkingId !== undefined) {
    if (!new ParkingsSqlite(db).findById(filter.parkingId))
      throw notFound(`no secured parking with id ${filter.parkingId}`);
    rows = boxes.listOfParking(filter.parkingId);
  } else {
    rows = boxes.listAll();
  }
  return rows.map((box) => {
    const learned = boxes.learned(box.module_id);
    const availability = availabilities.find(box.module_id);
    return {
      module_id: box.module_id,
      parking_id: box.parking_id,
      direction: box.direction,
      last_seen_at:
        learned?.last_seen_at === undefined || learned.last_seen_at === null
          ? null
          : new Date(learned.last_seen_at).toISOString(),
      battery_mv: learned?.battery_mv ?? null,
      box_time_drift_seconds: learned?.box_time_drift_seconds ?? null,
      last_box_seq: learned?.last_box_seq ?? null,
      last_control_seq: learned?.last_control_seq ?? null,
      next_control_seq: learned?.next_control_seq ?? box.next_control_seq,
      pending_control_commands: pendingControlOf(db, box.module_id),
      availability: availability?.availability ?? 'unknown',
      availability_reason: availability?.reason ?? null,
      availability_since:
        availability?.since === undefined || availability.since === null
          ? null
          : new Date(availability.since).toISOString(),
      gateway_id: availability?.gateway_id ?? null,
    };
  });
}
