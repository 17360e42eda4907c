// Every box's entry of GET /api/operator/parkings (and of the event stream's
// snapshot and `boxes` messages) read in sets: one statement for the boxes
// with their availability and newest verified response, one for the pending
// control commands, one for the revoked keys the boxes still take
// (revocationRisksOf, as `admin box status` reads them), one for the
// live reservations (holders and queues), one for the parkings. A fleet of
// 5,000 boxes is five statements, not 5,000 x 5: the bench page's first
// render stays bounded. The entries are the ones the
// per-box services give (boxStatuses, parkingView, lastResponseOf;
// test/api/operators/box-entries.test.ts compares them).
//
// BoxEntries reads through the store (either engine): GET
// /api/operator/parkings, and the event stream's renderer (the boxes of a
// flush in one read).
import { sql, type Selectable } from 'kysely';
import { noRevocationRisk, revocationRisksOf, type RevocationRisk } from './box-status.js';
import type { PendingControl } from '../control/index.js';
import type {
  BoxAvailabilityTable,
  BoxesTable,
  BoxLogsTable,
  ControlCommandsTable,
  OuterJoined,
} from '../db/schema.js';
import type { Store } from '../db/store.js';
import { parkingSettings } from './parking-view.js';
import { ReservationRows, viewOf, type ReservationRow } from '../reservations/index.js';
import type { ParkingRow } from '../parkings/index.js';
import { lastResponseOfRow, type OperatorBox, type OperatorParking } from './views.js';

type BoxEntryRow = Pick<
  Selectable<BoxesTable>,
  | 'module_id'
  | 'parking_id'
  | 'direction'
  | 'mac_address'
  | 'simulated'
  | 'last_seen_at'
  | 'battery_mv'
  | 'box_time_drift_seconds'
  | 'last_box_seq'
  | 'last_control_seq'
  | 'next_control_seq'
> &
  OuterJoined<Pick<Selectable<BoxAvailabilityTable>, 'availability' | 'reason' | 'since' | 'gateway_id'>> &
  /** The newest verified response (box_logs), all null without one. */
  OuterJoined<
    Pick<Selectable<BoxLogsTable>, 'response' | 'source' | 'received_at'> & { log_id: Selectable<BoxLogsTable>['id'] }
  >;

type PendingRow = Pick<
  Selectable<ControlCommandsTable>,
  'module_id' | 'id' | 'kind' | 'purpose' | 'attempts' | 'last_status' | 'last_error' | 'created_at'
>;

// The newest verified response of each box: a correlated lookup on the
// unique index box_logs_verified_seq (equipment_id, box_seq) WHERE verified
// = 1, inside the one statement (the box's own order, as lastResponseOf).
const BOX_ENTRY_SQL = `SELECT b.module_id, b.parking_id, b.direction, b.mac_address, b.simulated, b.last_seen_at, b.battery_mv, b.box_time_drift_seconds,
    b.last_box_seq, b.last_control_seq, b.next_control_seq, a.availability, a.reason, a.since, a.gateway_id,
    l.id AS log_id, l.response, l.source, l.received_at
  FROM boxes b
  LEFT JOIN box_availability a ON a.module_id = b.module_id
  LEFT JOIN box_logs l ON l.id = (
    SELECT v.id FROM box_logs v WHERE v.equipment_id = b.module_id AND v.verified = 1 ORDER BY v.box_seq DESC LIMIT 1)`;

const PENDING_SQL = `SELECT module_id, id, kind, purpose, attempts, last_status, last_error, created_at
  FROM control_commands WHERE state = 'pending'`;

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** The entries through the store: the same reads, in portable SQL (the raw
 * texts above: no per-call builder; compiled per engine by Kysely). `nowMs`
 * says which revoked keys a box still takes (those not expired by then). */
export class BoxEntries {
  readonly #store;
  readonly #kysely;

  constructor(store: Store) {
    this.#store = store;
    this.#kysely = store.kysely;
  }

  /** Every parking (by id) with its boxes (by module id). */
  async parkings(nowMs: number): Promise<OperatorParking[]> {
    const [pendingRows, boxRows, risks, reservations, parkingRows] = [
      (await sql<PendingRow>`${sql.raw(PENDING_SQL)} ORDER BY module_id, id`.execute(this.#kysely)).rows,
      (await sql<BoxEntryRow>`${sql.raw(BOX_ENTRY_SQL)} ORDER BY b.parking_id, b.module_id`.execute(this.#kysely)).rows,
      await revocationRisksOf(this.#store, nowMs),
      await new ReservationRows(this.#store).liveRowsOfBoxes(undefined, nowMs),
      await this.#kysely.selectFrom('secured_parkings').selectAll().orderBy('id').execute(),
    ];
    return composeParkings(pendingRows, boxRows, risks, reservations, parkingRows);
  }

  /** The entries of these boxes, by module id (a box no longer there has none): four statements whatever their number. */
  async boxes(moduleIds: readonly number[], nowMs: number): Promise<Map<number, OperatorBox>> {
    const entries = new Map<number, OperatorBox>();
    if (moduleIds.length === 0) return entries;
    const ids = sql.join(moduleIds.map((id) => sql`${id}`));
    const rows = (await sql<BoxEntryRow>`${sql.raw(BOX_ENTRY_SQL)} WHERE b.module_id IN (${ids})`.execute(this.#kysely))
      .rows;
    if (rows.length === 0) return entries;
    const pending = new Map<number, PendingControl[]>();
    for (const row of (
      await sql<PendingRow>`${sql.raw(PENDING_SQL)} AND module_id IN (${ids}) ORDER BY module_id, id`.execute(
        this.#kysely,
      )
    ).rows) {
      let of = pending.get(row.module_id);
      if (of === undefined) pending.set(row.module_id, (of = []));
      of.push(pendingOf(row));
    }
    const present = rows.map((row) => row.module_id);
    const risks = await revocationRisksOf(this.#store, nowMs, present);
    const reservations = await new ReservationRows(this.#store).liveRowsOfBoxes(present, nowMs);
    for (const row of rows)
      entries.set(
        row.module_id,
        entryOf(row, pending.get(row.module_id) ?? [], risks.get(row.module_id), reservations.get(row.module_id)),
      );
    return entries;
  }

  /** One box's entry, or undefined when there is no such box. */
  async box(moduleId: number, nowMs: number): Promise<OperatorBox | undefined> {
    const [row] = (
      await sql<BoxEntryRow>`${sql.raw(BOX_ENTRY_SQL)} WHERE b.module_id = ${moduleId}`.execute(this.#kysely)
    ).rows;
    if (row === undefined) return undefined;
    const pending = (
      await sql<PendingRow>`${sql.raw(PENDING_SQL)} AND module_id = ${moduleId} ORDER BY id`.execute(this.#kysely)
    ).rows;
    const risks = await revocationRisksOf(this.#store, nowMs, [moduleId]);
    const reservation = await new ReservationRows(this.#store).liveRowsOf(moduleId, nowMs);
    return entryOf(row, pending.map(pendingOf), risks.get(moduleId), reservation);
  }
}

/** Every parking (by id) with its settings (no secret) and each box's last known state, through the store. */
export function operatorParkings(store: Store, nowMs: number): Promise<OperatorParking[]> {
  return new BoxEntries(store).parkings(nowMs);
}

function composeParkings(
  pendingRows: readonly PendingRow[],
  boxRows: readonly BoxEntryRow[],
  risks: ReadonlyMap<number, RevocationRisk>,
  reservations: ReadonlyMap<number, readonly ReservationRow[]>,
  parkings: readonly ParkingRow[],
): OperatorParking[] {
  const pending = new Map<number, PendingControl[]>();
  for (const row of pendingRows) {
    let of = pending.get(row.module_id);
    if (of === undefined) pending.set(row.module_id, (of = []));
    of.push(pendingOf(row));
  }
  const boxesOf = new Map<number, OperatorBox[]>();
  for (const row of boxRows) {
    let of = boxesOf.get(row.parking_id);
    if (of === undefined) boxesOf.set(row.parking_id, (of = []));
    of.push(entryOf(row, pending.get(row.module_id) ?? [], risks.get(row.module_id), reservations.get(row.module_id)));
  }
  return parkings.map((parking) => ({ ...parkingSettings(parking), boxes: boxesOf.get(parking.id) ?? [] }));
}

function pendingOf(row: PendingRow): PendingControl {
  return {
    id: row.id,
    kind: row.kind,
    purpose: row.purpose,
    attempts: row.attempts,
    last_status: row.last_status,
    last_error: row.last_error,
    created_at: new Date(row.created_at).toISOString(),
  };
}

function entryOf(
  row: BoxEntryRow,
  pending: PendingControl[],
  risk: RevocationRisk | undefined,
  reservation: readonly ReservationRow[] | undefined,
): OperatorBox {
  return {
    module_id: row.module_id,
    parking_id: row.parking_id,
    direction: row.direction,
    simulated: row.simulated === 1,
    last_seen_at: iso(row.last_seen_at),
    battery_mv: row.battery_mv,
    box_time_drift_seconds: row.box_time_drift_seconds,
    last_box_seq: row.last_box_seq,
    last_control_seq: row.last_control_seq,
    next_control_seq: row.next_control_seq,
    pending_control_commands: pending,
    availability: row.availability ?? 'unknown',
    availability_reason: row.reason,
    availability_since: iso(row.since),
    gateway_id: row.gateway_id,
    ...(risk ?? noRevocationRisk()),
    mac_address: row.mac_address,
    last_response:
      row.log_id === null
        ? null
        : lastResponseOfRow({
            id: row.log_id,
            response: row.response,
            source: row.source ?? 'mqtt',
            received_at: row.received_at ?? 0,
          }),
    reservation: viewOf(reservation ?? []),
  };
}
