// What the stream's messages hold, read from the database when a flush (or
// a snapshot) needs it, never per raw event: a box entry as in GET
// /api/operator/parkings (plus `live` and `parking_id`), a session as in GET
// /api/operator/sessions, a parking's forwarding as in GET
// /api/operator/parkings/:id/forwarding, the newest box logs as stream
// items. Statements are prepared once per database (the flush runs four
// times a second while pages watch).
import type { Db } from '../db/open.js';
import { forwardingStatusNow, type ForwardingStatus } from '../forwarding/administration.js';
import { boxEntryReader, type BoxEntryReader } from '../operators/box-entries.js';
import {
  OPERATOR_SESSION_COLUMNS,
  operatorBoxLogsSqlite,
  toOperatorSession,
  type OperatorBox,
  type OperatorBoxLog,
  type OperatorParking,
  type OperatorSession,
  type OperatorSessionRow,
} from '../operators/views.js';
import { parseCreatedAt } from '../box-logs/validate.js';
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
  readonly #boxes: BoxEntryReader;
  readonly #session;
  readonly #today;

  constructor(
    private readonly db: Db,
    private readonly live: Pick<LiveBoxStates, 'of'>,
  ) {
    // The entries of GET /api/operator/parkings (set-based for the snapshot, one box for a flush).
    this.#boxes = boxEntryReader(db);
    this.#session = db.prepare<[number], OperatorSessionRow>(
      `SELECT ${OPERATOR_SESSION_COLUMNS} FROM parking_sessions s JOIN users u ON u.id = s.user_id WHERE s.id = ?`,
    );
    this.#today = db.prepare<[number], OperatorSessionRow>(
      `SELECT ${OPERATOR_SESSION_COLUMNS} FROM parking_sessions s JOIN users u ON u.id = s.user_id
       WHERE s.start_time >= ? OR s.state IN ('entering', 'active', 'exiting') ORDER BY s.id DESC`,
    );
  }

  /** A box's entry (as in GET /api/operator/parkings, with `parking_id` and
   * `live`), or undefined when the box is no longer there. */
  box(moduleId: number): LiveBox | undefined {
    const entry = this.#boxes.box(moduleId);
    return entry === undefined ? undefined : { ...entry, live: this.live.of(moduleId) };
  }

  session(sessionId: number): OperatorSession | undefined {
    const row = this.#session.get(sessionId);
    return row === undefined ? undefined : toOperatorSession(row);
  }

  /** A parking's forwarding, one entry per URL (none when it forwards nowhere or is gone). */
  forwarding(parkingId: number): ForwardingEntry[] {
    try {
      return forwardingStatusNow(this.db, parkingId);
    } catch {
      return []; // the parking is gone: nothing to show
    }
  }

  snapshot(nowMs: number): Snapshot {
    const startOfDay = Math.floor(nowMs / 86_400_000) * 86_400_000; // UTC
    return {
      server_time: new Date(nowMs).toISOString(),
      parkings: withLive(this.#boxes.parkings(), this.live),
      sessions: this.#today.all(startOfDay).map(toOperatorSession),
      box_logs: operatorBoxLogsSqlite(this.db, { limit: SNAPSHOT_BOX_LOGS }).box_logs.reverse().map(streamItemOf),
      forwarding: forwardingStatusNow(this.db, undefined),
    };
  }
}
