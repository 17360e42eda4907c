// What a delivery's body holds: a JSON array of spec 2.2 records, unchanged by
// Standard Webhooks, and its size limit.
import type { ForwardRow } from '../box-logs/index.js';

/** Records per delivery (one POST). */
export const MAX_RECORDS_PER_DELIVERY = 100;
/** Bytes of a delivery's body, whichever limit comes first; a single record
 * larger than this goes alone (it cannot be split). */
export const MAX_DELIVERY_BYTES = 256 * 1024;

/** A record of spec 2.2: the 2.1 fields, `email` added, no wrapper; and
 * `verified`, whether the server checked the box's response. */
export function forwardRecord(row: ForwardRow): Record<string, unknown> {
  return {
    fo_user_id: row.fo_user_id,
    smart_key_id: row.smart_key_id,
    equipment_id: row.equipment_id,
    secured_parking_id: row.secured_parking_id,
    type: row.type,
    command: row.command,
    command_decrypted: row.command_decrypted,
    response: row.response,
    response_decrypted: row.response_decrypted,
    offline: row.offline === 1,
    created_at: row.created_at,
    point_attributes:
      row.latitude === null || row.longitude === null ? null : { latitude: row.latitude, longitude: row.longitude },
    email: row.email,
    verified: row.verified === 1,
  };
}

/** How many of `recordBytes` (each record's JSON size, in order) fit one body
 * "[r1,r2,...]" within MAX_DELIVERY_BYTES and MAX_RECORDS_PER_DELIVERY; at least one. */
export function recordsThatFit(recordBytes: readonly number[]): number {
  let total = 2; // the brackets
  let count = 0;
  for (const bytes of recordBytes.slice(0, MAX_RECORDS_PER_DELIVERY)) {
    const next = total + bytes + (count > 0 ? 1 : 0);
    if (count > 0 && next > MAX_DELIVERY_BYTES) break;
    total = next;
    count += 1;
  }
  return count;
}
