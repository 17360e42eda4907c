// What each box last told the service in a verified response
// (docs/protocol.md, Response frame), and its queued control commands.
import { sql } from 'kysely';
import { type PendingControl, pendingControlOfBoxes } from '../control/index.js';
import type { Store } from '../db/store.js';
import { notFound } from '../http/domain-error.js';
import type { BoxDirection } from '../../firmware-protocol/index.js';
import type { AvailabilityValue } from '../boxes/index.js';

/** When a box was last seen, its battery, how far its clock is off, its sequences. */
export interface BoxStatus {
  module_id: number;
  parking_id: number;
  direction: BoxDirection;
  /** Played by parkbench's simulator (the demo's boxes, a fleet's, `admin box add --simulated`); false: hardware. */
  simulated: boolean;
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
  /** Smart keys revoked at the service that still open this box: their
   * REVOKE failed (REVOCATION_FULL, most often) or was skipped, they are in
   * their window, and the box holds the issuer key that signed them. */
  revocations_missing: MissingRevocation[];
  /** What the operator can do about them; null when none is missing. */
  remedy: string | null;
}

export interface MissingRevocation {
  smart_key_id: number;
  /** When the box stops taking the key by itself (its end + the box's skew). */
  open_until: string;
  /** Why its REVOKE did not reach the box. */
  last_error: string | null;
}

/** One box, the boxes of one parking, or all of them. */
export interface BoxFilter {
  moduleId?: number;
  parkingId?: number;
}

/** The statuses of the boxes the filter names, in module id order: one
 * query of the boxes with their availability, one of their pending
 * commands, one of the revoked keys they still take. */
export async function boxStatuses(store: Store, filter: BoxFilter, nowMs: number): Promise<BoxStatus[]> {
  const { kysely } = store;
  let query = kysely
    .selectFrom('boxes as b')
    .leftJoin('box_availability as a', 'a.module_id', 'b.module_id')
    .select([
      'b.module_id',
      'b.parking_id',
      'b.direction',
      'b.simulated',
      'b.last_seen_at',
      'b.battery_mv',
      'b.box_time_drift_seconds',
      'b.last_box_seq',
      'b.last_control_seq',
      'b.next_control_seq',
      'a.availability',
      'a.reason',
      'a.since',
      'a.gateway_id',
    ])
    .orderBy('b.module_id');
  if (filter.moduleId !== undefined) query = query.where('b.module_id', '=', filter.moduleId);
  else if (filter.parkingId !== undefined) {
    // PARKINGS owns the parkings' repository: whether it exists is a small query of ours.
    const parking = await kysely
      .selectFrom('secured_parkings')
      .select('id')
      .where('id', '=', filter.parkingId)
      .executeTakeFirst();
    if (parking === undefined) throw notFound(`no secured parking with id ${filter.parkingId}`);
    query = query.where('b.parking_id', '=', filter.parkingId);
  }
  const rows = await query.execute();
  if (filter.moduleId !== undefined && rows.length === 0) throw notFound(`no box with module id ${filter.moduleId}`);
  const pending = await pendingControlOfBoxes(
    store,
    rows.map((row) => row.module_id),
  );
  const risks = await revocationRisksOf(
    store,
    nowMs,
    rows.map((row) => row.module_id),
  );
  return rows.map((box) => ({
    module_id: box.module_id,
    parking_id: box.parking_id,
    direction: box.direction,
    simulated: box.simulated === 1,
    last_seen_at: isoOrNull(box.last_seen_at),
    battery_mv: box.battery_mv,
    box_time_drift_seconds: box.box_time_drift_seconds,
    last_box_seq: box.last_box_seq,
    last_control_seq: box.last_control_seq,
    next_control_seq: box.next_control_seq,
    pending_control_commands: pending.get(box.module_id) ?? [],
    availability: box.availability ?? 'unknown',
    availability_reason: box.reason,
    availability_since: isoOrNull(box.since),
    gateway_id: box.gateway_id,
    ...(risks.get(box.module_id) ?? noRevocationRisk()),
  }));
}

/** Whether a box still takes keys revoked at the service: those keys and the remedy. */
export type RevocationRisk = Pick<BoxStatus, 'revocations_missing' | 'remedy'>;

/** A box that takes no revoked key (a new object each time: entries share no array). */
export const noRevocationRisk = (): RevocationRisk => ({ revocations_missing: [], remedy: null });

/**
 * The revoked keys each box still takes (BoxStatus.revocations_missing) and
 * what to do about them, by module id: one query for all the boxes named,
 * or for every box when `moduleIds` is absent (the operator's snapshot: no
 * list of every id in the statement). A box absent from the map is at no
 * risk (noRevocationRisk).
 */
export async function revocationRisksOf(
  store: Store,
  nowMs: number,
  moduleIds?: readonly number[],
): Promise<Map<number, RevocationRisk>> {
  const risks = new Map<number, RevocationRisk>();
  if (moduleIds?.length === 0) return risks;
  const query = unsettledRevokesQuery(store, moduleIds);
  for (const row of await query.execute()) {
    const openUntil = row.end_time + row.skew_seconds * 1000;
    if (openUntil < nowMs) continue;
    // A signed key whose issuer key the boxes no longer hold opens nothing.
    const signer = row.signed_by?.toLowerCase() ?? null;
    const held = [row.issuer_public_key, row.issuer_previous_public_key].map((key) => key?.toLowerCase() ?? null);
    if (row.access_mode === 'signed' && signer !== null && !held.includes(signer)) continue;
    const missing = { smart_key_id: row.id, open_until: new Date(openUntil).toISOString(), last_error: row.last_error };
    const known = risks.get(row.module_id);
    if (known === undefined)
      risks.set(row.module_id, { revocations_missing: [missing], remedy: remedyOf(row.parking_id, row.access_mode) });
    else known.revocations_missing.push(missing);
  }
  return risks;
}

/** The REVOKEs that failed or were skipped, of revoked keys, with what
 * decides whether each key still opens its box (exported for the test of
 * its query plan). */
export function unsettledRevokesQuery(store: Store, moduleIds?: readonly number[]) {
  const query = store.kysely
    .selectFrom('control_commands as c')
    .innerJoin('smart_keys as k', 'k.id', 'c.smart_key_id')
    .innerJoin('boxes as b', 'b.module_id', 'c.module_id')
    .innerJoin('secured_parkings as p', 'p.id', 'k.parking_id')
    .select(['c.module_id', 'k.id', 'k.end_time', 'k.signed_by', 'k.parking_id', 'b.skew_seconds', 'c.last_error'])
    .select(['p.access_mode', 'p.issuer_public_key', 'p.issuer_previous_public_key'])
    // As literals: the partial index control_commands_unsettled_revokes (migration 20) holds these rows only.
    .where(sql<boolean>`c.purpose = 'revoke' AND c.state IN ('failed', 'skipped')`)
    .where('k.revoked_at', 'is not', null)
    .orderBy('c.module_id')
    .orderBy('k.id');
  return moduleIds === undefined ? query : query.where('c.module_id', 'in', moduleIds);
}

/** docs/operations.md, A revocation a box could not take: the parking whose
 * issuer signed the keys (a REVOKE goes only to its own parking's boxes). */
function remedyOf(parkingId: number, accessMode: 'sealed' | 'signed'): string {
  return accessMode === 'signed'
    ? `parkbench admin parking rotate-issuer --id ${parkingId} --re-sign: the live keys are signed again and the previous issuer key leaves the boxes, and with it every revoked key's signature`
    : 'a sealed parking cannot take its keys back: the revoked keys open this box until they expire; move the parking to signed (admin parking set-access --access signed)';
}

const isoOrNull = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
