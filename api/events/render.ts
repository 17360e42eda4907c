// What the stream's messages hold, read from the database when a flush (or
// a snapshot) needs it, never per raw event: a box entry as in GET
// /api/operator/parkings (plus `live` and `parking_id`), a session as in GET
// /api/operator/sessions, a parking's forwarding as in GET
// /api/operator/parkings/:id/forwarding, the newest box logs as stream
// items. Statements are prepared once per database (the flush runs four
// times a second while pages watch).
import type { Db } from '../db/open.js';
import { forwardingStatus, type ForwardingStatus } from '../forwarding/administration.js';
import {
  LAST_RESPONSE_SQL,
  lastResponseOfRow,
  OPERATOR_SESSION_COLUMNS,
  operatorBoxLogs,
  operatorParkings,
  toOperatorSession,
  type LastResponseRow,
  type OperatorBox,
  type OperatorBoxLog,
  type OperatorParking,
  type OperatorSession,
} from '../operators/views.js';
import type { SessionRow } from '../repositories/sessions.js';
import { parseCreatedAt } from '../box-logs/validate.js';
import type { BoxDirection } from '../../firmware-protocol/index.js';
import type { LiveBoxStates, LiveState } from './live-states.js';
import type { BoxLogStreamItem } from './types.js';

export type LiveBox = OperatorBox & { live: LiveState | null };
export type LiveParking = Omit<OperatorParking, 'boxes'> & { boxes: LiveBox[] };
export type ForwardingEntry = ForwardingStatus & { parking_id: number };

export interface Snapshot {
  server_time: string;
  parkings: LiveParking[];
  sessions: OperatorSession[];
  box_logs: BoxLogStreamItem[];
  forwarding: ForwardingEntry[];
}

/** Box logs in a snapshot (the newest, oldest first). */
export const SNAPSHOT_BOX_LOGS = 100;

interface BoxRowJoined {
  module_id: number;
  parking_id: number;
  direction: BoxDirection;
  mac_address: string;
  last_seen_at: number | null;
  battery_mv: number | null;
  box_time_drift_seconds: number | null;
  last_box_seq: number | null;
  last_control_seq: number | null;
  next_control_seq: number;
  availability: 'online' | 'offline' | 'unknown' | null;
  reason: string | null;
  since: number | null;
  gateway_id: string | null;
}

interface PendingRow {
  id: number;
  kind: string;
  purpose: string;
  attempts: number;
  last_status: string | null;
  last_error: string | null;
  created_at: number;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** The parkings' box entries with their `live` state. */
export function withLive(parkings: OperatorParking[], live: Pick<LiveBoxStates, 'of'>): LiveParking[] {
  return parkings.map((parking) => ({
    ...parking,
    boxes: parking.boxes.map((box) => ({ ...box, live: live.of(box.module_id) })),
  }));
}

/** A box log of GET /api/operator/box_logs as a stream item. */
export function streamItemOf(log: OperatorBoxLog): BoxLogStreamItem {
  return { ...log, via: log.source, latency_ms: latencyMs(log.created_at, Date.parse(log.received_at)) };
}

/** received_at minus created_at (UTC `YYYY-MM-DD HH:MM:SS`), ms; null when created_at does not parse. */
export function latencyMs(createdAt: string, receivedAtMs: number): number | null {
  const created = parseCreatedAt(createdAt);
  return created === undefined || Number.isNaN(receivedAtMs) ? null : receivedAtMs - created;
}

export class StreamRenderer {
  readonly #box;
  readonly #pending;
  readonly #lastResponse;
  readonly #session;
  readonly #today;

  constructor(
    private readonly db: Db,
    private readonly live: Pick<LiveBoxStates, 'of'>,
  ) {
    // The fields of api/boxes/status.ts boxStatuses, in one read (a test
    // compares a stream entry with GET /api/operator/parkings' one).
    this.#box = db.prepare<[number], BoxRowJoined>(
      `SELECT b.module_id, b.parking_id, b.direction, b.mac_address, b.last_seen_at, b.battery_mv, b.box_time_drift_seconds,
              b.last_box_seq, b.last_control_seq, b.next_control_seq, a.availability, a.reason, a.since, a.gateway_id
       FROM boxes b LEFT JOIN box_availability a ON a.module_id = b.module_id WHERE b.module_id = ?`,
    );
    this.#pending = db.prepare<[number], PendingRow>(
      "SELECT id, kind, purpose, attempts, last_status, last_error, created_at FROM control_commands WHERE module_id = ? AND state = 'pending' ORDER BY id",
    );
    this.#lastResponse = db.prepare<[number], LastResponseRow>(LAST_RESPONSE_SQL);
    this.#session = db.prepare<[number], SessionRow & { email: string }>(
      `SELECT ${OPERATOR_SESSION_COLUMNS} FROM parking_sessions s JOIN users u ON u.id = s.user_id WHERE s.id = ?`,
    );
    this.#today = db.prepare<[number], SessionRow & { email: string }>(
      `SELECT ${OPERATOR_SESSION_COLUMNS} FROM parking_sessions s JOIN users u ON u.id = s.user_id
       WHERE s.start_time >= ? OR s.state IN ('entering', 'active', 'exiting') ORDER BY s.id DESC`,
    );
  }

  /** A box's entry (as in GET /api/operator/parkings, with `parking_id` and
   * `live`), or undefined when the box is no longer there. */
  box(moduleId: number): LiveBox | undefined {
    const row = this.#box.get(moduleId);
    if (row === undefined) return undefined;
    return {
      module_id: row.module_id,
      parking_id: row.parking_id,
      direction: row.direction,
      last_seen_at: iso(row.last_seen_at),
      battery_mv: row.battery_mv,
      box_time_drift_seconds: row.box_time_drift_seconds,
      last_box_seq: row.last_box_seq,
      last_control_seq: row.last_control_seq,
      next_control_seq: row.next_control_seq,
      pending_control_commands: this.#pending.all(moduleId).map((pending) => ({
        ...pending,
        created_at: new Date(pending.created_at).toISOString(),
      })),
      availability: row.availability ?? 'unknown',
      availability_reason: row.reason,
      availability_since: iso(row.since),
      gateway_id: row.gateway_id,
      mac_address: row.mac_address,
      last_response: lastResponseOfRow(this.#lastResponse.get(moduleId)),
      live: this.live.of(moduleId),
    };
  }

  session(sessionId: number): OperatorSession | undefined {
    const row = this.#session.get(sessionId);
    return row === undefined ? undefined : toOperatorSession(row);
  }

  /** A parking's forwarding, one entry per URL (none when it forwards nowhere or is gone). */
  forwarding(parkingId: number): ForwardingEntry[] {
    try {
      return forwardingStatus(this.db, parkingId);
    } catch {
      return []; // the parking is gone: nothing to show
    }
  }

  snapshot(nowMs: number): Snapshot {
    const startOfDay = Math.floor(nowMs / 86_400_000) * 86_400_000; // UTC
    return {
      server_time: new Date(nowMs).toISOString(),
      parkings: withLive(operatorParkings(this.db), this.live),
      sessions: this.#today.all(startOfDay).map(toOperatorSession),
      box_logs: operatorBoxLogs(this.db, { limit: SNAPSHOT_BOX_LOGS }).box_logs.reverse().map(streamItemOf),
      forwarding: forwardingStatus(this.db, undefined),
    };
  }
}
