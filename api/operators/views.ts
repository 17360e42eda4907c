// What the operator HTTP API reads (/api/operator/...): sessions, and box
// logs a page at a time, and the shapes of a parking's boxes (read in sets by
// box-entries.ts: operatorParkings).
import type { BoxStatus } from '../boxes/status.js';
import type { Db } from '../db/open.js';
import { notFound } from '../domain-error.js';
import type { ParkingView } from '../parkings/view.js';
import { formatMinorUnits, ParkingsSqlite } from '../repositories/parkings.js';
import type { SessionRow, SessionState } from '../repositories/sessions.js';
import type { KeyPurpose } from '../repositories/smart-keys.js';
import {
  barrierName,
  isProtocolError,
  parseResponse,
  Status,
  statusName,
  type StatusName,
} from '../../firmware-protocol/index.js';

/** What the newest verified response of a box said (docs/protocol.md, Response frame). */
export interface LastResponse {
  box_log_id: number;
  status: StatusName | null;
  /** The barrier then, lowercase: closed, opening, open, closing, fault. */
  barrier: string | null;
  /** How that response reached the service: http (a phone's upload) or mqtt (the box, through a gateway or its own link). */
  via: 'http' | 'mqtt';
  received_at: string;
}

export type OperatorBox = BoxStatus & { mac_address: string; last_response: LastResponse | null };

export type OperatorParking = Omit<ParkingView, 'boxes'> & { boxes: OperatorBox[] };

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** The newest verified response of a box: one read of the unique index on
 * verified (equipment_id, box_seq), the box's own order. boxStatuses keeps
 * its battery and clock; the barrier and the route are only in the frame. */
export function lastResponseOf(db: Db, moduleId: number): LastResponse | null {
  return lastResponseOfRow(db.prepare<[number], LastResponseRow>(LAST_RESPONSE_SQL).get(moduleId));
}

/** The newest verified response of a box (its statement prepared once by callers that read it often). */
export const LAST_RESPONSE_SQL =
  'SELECT id, response, source, received_at FROM box_logs WHERE equipment_id = ? AND verified = 1 ORDER BY box_seq DESC LIMIT 1';

export interface LastResponseRow {
  id: number;
  response: string | null;
  source: 'http' | 'mqtt';
  received_at: number;
}

export function lastResponseOfRow(row: LastResponseRow | undefined): LastResponse | null {
  if (row === undefined) return null;
  let status: StatusName | null = null;
  let barrier: string | null = null;
  try {
    const frame = parseResponse(Buffer.from(row.response ?? '', 'base64'));
    status = statusName(frame.status) ?? null;
    barrier = barrierName(frame.barrier)?.toLowerCase() ?? null;
  } catch (error) {
    // Verified responses parsed once already; a frame that no longer does says nothing.
    if (!isProtocolError(error)) throw error;
  }
  return { box_log_id: row.id, status, barrier, via: row.source, received_at: new Date(row.received_at).toISOString() };
}

export interface OperatorSession {
  id: number;
  user_id: number;
  email: string;
  first_name: string;
  last_name: string;
  parking_id: number;
  state: SessionState;
  start_time: string;
  end_time: string;
  entrance_remaining_tries: number;
  exit_remaining_tries: number;
  amount: string;
  currency: string;
  ended_at: string | null;
  /** Every smart key of the session, oldest first (revoked ones too): what
   * the page revokes, known before any box log names one. */
  smart_key_ids: number[];
}

export interface SessionFilter {
  state?: SessionState;
  parkingId?: number;
  limit: number;
}

/** Sessions newest first, of a state and a parking if asked. */
export function operatorSessions(db: Db, filter: SessionFilter): OperatorSession[] {
  if (filter.parkingId !== undefined && !new ParkingsSqlite(db).findById(filter.parkingId))
    throw notFound(`no secured parking with id ${filter.parkingId}`);
  const rows = db
    .prepare<[string | null, string | null, number | null, number | null, number], OperatorSessionRow>(
      `SELECT ${OPERATOR_SESSION_COLUMNS}
       FROM parking_sessions s JOIN users u ON u.id = s.user_id
       WHERE (? IS NULL OR s.state = ?) AND (? IS NULL OR s.parking_id = ?)
       ORDER BY s.id DESC LIMIT ?`,
    )
    .all(filter.state ?? null, filter.state ?? null, filter.parkingId ?? null, filter.parkingId ?? null, filter.limit);
  return rows.map(toOperatorSession);
}

/** The columns toOperatorSession reads (parking_sessions s JOIN users u):
 * the session's smart keys as a JSON array (index smart_keys_session). */
export const OPERATOR_SESSION_COLUMNS = `s.id, s.user_id, u.email, u.first_name, u.last_name, s.parking_id, s.state, s.start_time, s.end_time,
  s.entrance_remaining_tries, s.exit_remaining_tries, s.amount_minor, s.currency, s.ended_at,
  (SELECT json_group_array(k.id) FROM (SELECT id FROM smart_keys WHERE session_id = s.id ORDER BY id) k) AS smart_key_ids`;

/** What OPERATOR_SESSION_COLUMNS reads. */
export type OperatorSessionRow = SessionRow & {
  email: string;
  first_name: string;
  last_name: string;
  /** A JSON array of integers. */
  smart_key_ids: string;
};

/** A session row (its driver's email and name, its smart keys) as the operator API shows it. */
export function toOperatorSession(row: OperatorSessionRow): OperatorSession {
  return {
    id: row.id,
    user_id: row.user_id,
    email: row.email,
    first_name: row.first_name,
    last_name: row.last_name,
    parking_id: row.parking_id,
    state: row.state,
    start_time: new Date(row.start_time).toISOString(),
    end_time: new Date(row.end_time).toISOString(),
    entrance_remaining_tries: row.entrance_remaining_tries,
    exit_remaining_tries: row.exit_remaining_tries,
    amount: formatMinorUnits(row.amount_minor),
    currency: row.currency,
    ended_at: iso(row.ended_at),
    smart_key_ids: JSON.parse(row.smart_key_ids) as number[],
  };
}

export interface OperatorBoxLog {
  id: number;
  source: 'http' | 'mqtt';
  equipment_id: number;
  secured_parking_id: number;
  fo_user_id: number | null;
  smart_key_id: number | null;
  session_id: number | null;
  /** What its smart key is for: session, exit, or operator (an operator's one-off ACCESS); null without a key. */
  key_purpose: KeyPurpose | null;
  /** The operator who sent an operator key's ACCESS (null otherwise, or once that operator is removed). */
  operator: string | null;
  type: string;
  command: string | null;
  response: string | null;
  offline: boolean;
  created_at: string;
  verified: boolean;
  box_seq: number | null;
  /** The docs/protocol.md status name of the verified response; null when not verified. */
  status: StatusName | null;
  received_at: string;
}

export interface BoxLogFilter {
  moduleId?: number;
  sessionId?: number;
  status?: StatusName;
  verified?: boolean;
  /** From a previous page's next_cursor: only logs older than it. */
  cursor?: string;
  limit: number;
}

export interface BoxLogPage {
  box_logs: OperatorBoxLog[];
  /** Pass as `cursor` for the next (older) page; null on the last page. */
  next_cursor: string | null;
}

/** Cursors are opaque to clients; inside, the id of the last log shown. Keyed
 * on the id (a log's id only grows), a page is stable while logs arrive:
 * new ones are newer than every cursor, so nothing shifts between pages. */
const CURSOR_PREFIX = 'bl1.';

export function encodeCursor(id: number): string {
  return Buffer.from(`${CURSOR_PREFIX}${id}`, 'utf8').toString('base64url');
}

/** The id inside a cursor, or undefined when it is not one of ours. */
export function decodeCursor(cursor: string): number | undefined {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!text.startsWith(CURSOR_PREFIX)) return undefined;
  const digits = text.slice(CURSOR_PREFIX.length);
  if (!/^[1-9]\d{0,15}$/.test(digits)) return undefined;
  const id = Number(digits);
  return Number.isSafeInteger(id) ? id : undefined;
}

interface BoxLogRow {
  id: number;
  source: 'http' | 'mqtt';
  equipment_id: number;
  secured_parking_id: number;
  fo_user_id: number | null;
  smart_key_id: number | null;
  session_id: number | null;
  key_purpose: KeyPurpose | null;
  operator: string | null;
  type: string;
  command: string | null;
  response: string | null;
  offline: number;
  created_at: string;
  verified: number;
  box_seq: number | null;
  status: number | null;
  received_at: number;
}

/** Box logs newest first (by id), filtered, `limit` a page; the cursor must come from decodeCursor. */
export function operatorBoxLogs(db: Db, filter: Omit<BoxLogFilter, 'cursor'> & { beforeId?: number }): BoxLogPage {
  const status = filter.status === undefined ? null : Status[filter.status];
  const verified = filter.verified === undefined ? null : filter.verified ? 1 : 0;
  const rows = db
    .prepare<Record<string, number | null>, BoxLogRow>(
      `SELECT b.id, b.source, b.equipment_id, b.secured_parking_id, b.fo_user_id, b.smart_key_id, k.session_id, k.purpose AS key_purpose, o.name AS operator, b.type, b.command, b.response,
              b.offline, b.created_at, b.verified, b.box_seq, b.status, b.received_at
       FROM box_logs b LEFT JOIN smart_keys k ON k.id = b.smart_key_id LEFT JOIN operators o ON o.id = k.operator_id
       WHERE (@before IS NULL OR b.id < @before)
         AND (@module IS NULL OR b.equipment_id = @module)
         AND (@session IS NULL OR k.session_id = @session)
         AND (@status IS NULL OR (b.verified = 1 AND b.status = @status))
         AND (@verified IS NULL OR b.verified = @verified)
       ORDER BY b.id DESC LIMIT @limit`,
    )
    .all({
      before: filter.beforeId ?? null,
      module: filter.moduleId ?? null,
      session: filter.sessionId ?? null,
      status,
      verified,
      limit: filter.limit + 1,
    });
  const more = rows.length > filter.limit;
  const page = more ? rows.slice(0, filter.limit) : rows;
  const last = page.at(-1);
  return {
    box_logs: page.map((row) => ({
      ...row,
      offline: row.offline === 1,
      verified: row.verified === 1,
      status: row.verified === 1 && row.status !== null ? (statusName(row.status) ?? null) : null,
      received_at: new Date(row.received_at).toISOString(),
    })),
    next_cursor: more && last ? encodeCursor(last.id) : null,
  };
}
