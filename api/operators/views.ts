// What the operator HTTP API reads (/api/operator/...): sessions, and box
// logs a page at a time, and the shapes of a parking's boxes (read in sets by
// box-entries.ts: operatorParkings).
import type { BoxStatus } from './box-status.js';
import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { BoxLogsTable, OperatorsTable, OuterJoined, SmartKeysTable, UsersTable } from '../db/schema.js';
import type { Dialect, Store } from '../db/store.js';
import { cursorPosition, encodeCursor } from '../http/cursor.js';
import { notFound } from '../http/domain-error.js';
import type { ParkingView } from './parking-view.js';
import { formatMinorUnits } from '../parkings/index.js';
import type { SessionRow, SessionState } from '../sessions/index.js';
import type { KeyPurpose } from '../smart-keys/index.js';
import type { ReservationView } from '../reservations/index.js';
import {
  barrierName,
  type BarrierName,
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
  barrier: Lowercase<BarrierName> | null;
  /** How that response reached the service: http (a phone's upload) or mqtt (the box, through a gateway or its own link). */
  via: 'http' | 'mqtt';
  received_at: string;
}

/** A box as the operator API and the page show it: its status as `admin box
 * status` gives it (the revoked keys it still takes and the remedy among
 * them), its MAC, its newest verified response. */
export type OperatorBox = BoxStatus & {
  mac_address: string;
  last_response: LastResponse | null;
  /** Who holds the box and who waits for it (api/reservations/); null while nobody holds it. */
  reservation: ReservationView | null;
};

export type OperatorParking = Omit<ParkingView, 'boxes'> & { boxes: OperatorBox[] };

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** The newest verified response of a box: one read of the unique index on
 * verified (equipment_id, box_seq), the box's own order. boxStatuses keeps
 * its battery and clock; the barrier and the route are only in the frame. */
export async function lastResponseOf(store: Store, moduleId: number): Promise<LastResponse | null> {
  const row = await store.kysely
    .selectFrom('box_logs')
    .select(['id', 'response', 'source', 'received_at'])
    .where('equipment_id', '=', moduleId)
    .where('verified', '=', 1)
    .orderBy('box_seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  return lastResponseOfRow(row);
}

export type LastResponseRow = Pick<Selectable<BoxLogsTable>, 'id' | 'response' | 'source' | 'received_at'>;

export function lastResponseOfRow(row: LastResponseRow | undefined): LastResponse | null {
  if (row === undefined) return null;
  let status: StatusName | null = null;
  let barrier: Lowercase<BarrierName> | null = null;
  try {
    const frame = parseResponse(Buffer.from(row.response ?? '', 'base64'));
    status = statusName(frame.status) ?? null;
    // toLowerCase() is typed string; the name's lowercase is what it returns.
    barrier = (barrierName(frame.barrier)?.toLowerCase() as Lowercase<BarrierName> | undefined) ?? null;
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
export async function operatorSessions(store: Store, filter: SessionFilter): Promise<OperatorSession[]> {
  const { kysely } = store;
  if (filter.parkingId !== undefined) {
    // PARKINGS owns the parkings' repository: whether it exists is a small query of ours.
    const parking = await kysely
      .selectFrom('secured_parkings')
      .select('id')
      .where('id', '=', filter.parkingId)
      .executeTakeFirst();
    if (parking === undefined) throw notFound(`no secured parking with id ${filter.parkingId}`);
  }
  let query = sessionsQuery(store).orderBy('s.id', 'desc').limit(filter.limit);
  if (filter.state !== undefined) query = query.where('s.state', '=', filter.state);
  if (filter.parkingId !== undefined) query = query.where('s.parking_id', '=', filter.parkingId);
  return (await query.execute()).map(toOperatorSession);
}

/** The sessions of these ids (a session no longer there has none). */
export async function operatorSessionsById(
  store: Store,
  sessionIds: readonly number[],
): Promise<Map<number, OperatorSession>> {
  if (sessionIds.length === 0) return new Map();
  const rows = await sessionsQuery(store).where('s.id', 'in', sessionIds).execute();
  return new Map(rows.map((row) => [row.id, toOperatorSession(row)]));
}

/** 'finished' as a literal in the SQL, as the partial indexes on open
 * sessions are written: a bound parameter would hide from SQLite's planner
 * that they apply. */
const FINISHED = sql.lit<SessionState>('finished');

/** The sessions of the day, at most a page of them, and how many there are. */
export interface SessionsOfDay {
  /** The newest `limit` (by start time, then id), newest first. */
  sessions: OperatorSession[];
  /** All the sessions of the day: more than `sessions` holds when it was cut. */
  total: number;
}

/**
 * The sessions of the day (started since `startOfDayMs`, UTC) and the open
 * ones started before it: the newest `limit` of them and their count. The
 * work is bounded by `limit` whatever the table holds: today's newest are a
 * backward range of the index on (start_time, id), the older open ones a
 * range of the partial index on open sessions, and the counts read the
 * same ranges (migration 16).
 */
export async function operatorSessionsOfDay(store: Store, startOfDayMs: number, limit: number): Promise<SessionsOfDay> {
  const newestFirst = (query: ReturnType<typeof sessionsQuery>) =>
    query.orderBy('s.start_time', 'desc').orderBy('s.id', 'desc').limit(limit);
  const today = await newestFirst(sessionsQuery(store).where('s.start_time', '>=', startOfDayMs)).execute();
  const openBefore =
    today.length < limit
      ? await newestFirst(
          sessionsQuery(store).where('s.state', '<>', FINISHED).where('s.start_time', '<', startOfDayMs),
        ).execute()
      : [];
  const counts = await store.kysely
    .selectNoFrom((eb) => [
      eb
        .selectFrom('parking_sessions')
        .select(eb.fn.countAll<number>().as('n'))
        .where('start_time', '>=', startOfDayMs)
        .as('today'),
      eb
        .selectFrom('parking_sessions')
        .select(eb.fn.countAll<number>().as('n'))
        .where('state', '<>', FINISHED)
        .where('start_time', '<', startOfDayMs)
        .as('open_before'),
    ])
    .executeTakeFirstOrThrow();
  return {
    sessions: [...today, ...openBefore].slice(0, limit).map(toOperatorSession),
    total: Number(counts.today) + Number(counts.open_before),
  };
}

/** Sessions with their driver's email and name and their smart keys, as the operator API shows them. */
function sessionsQuery(store: Store) {
  return store.kysely
    .selectFrom('parking_sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select([
      's.id',
      's.user_id',
      'u.email',
      'u.first_name',
      'u.last_name',
      's.parking_id',
      's.state',
      's.start_time',
      's.end_time',
      's.entrance_remaining_tries',
      's.exit_remaining_tries',
      's.amount_minor',
      's.currency',
      's.ended_at',
      smartKeyIdsOf(store.dialect).as('smart_key_ids'),
    ]);
}

/** The session's smart keys as a JSON array in text, ascending (index
 * smart_keys_session): json_group_array on SQLite, json_agg on PostgreSQL. */
function smartKeyIdsOf(dialect: Dialect): RawBuilder<string> {
  return dialect === 'postgres'
    ? sql<string>`(SELECT coalesce(json_agg(k.id ORDER BY k.id), '[]'::json)::text FROM smart_keys k WHERE k.session_id = s.id)`
    : sql<string>`(SELECT json_group_array(k.id) FROM (SELECT id FROM smart_keys WHERE session_id = s.id ORDER BY id) k)`;
}

/** A session row as sessionsQuery reads it (parking_sessions s JOIN users u): its smart keys as a JSON array. */
export type OperatorSessionRow = Pick<
  SessionRow,
  | 'id'
  | 'user_id'
  | 'parking_id'
  | 'state'
  | 'start_time'
  | 'end_time'
  | 'entrance_remaining_tries'
  | 'exit_remaining_tries'
  | 'amount_minor'
  | 'currency'
  | 'ended_at'
> &
  Pick<Selectable<UsersTable>, 'email' | 'first_name' | 'last_name'> & {
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

export function encodeBoxLogCursor(id: number): string {
  return encodeCursor(CURSOR_PREFIX, String(id));
}

/** The id inside a cursor, or undefined when it is not one of ours. */
export function decodeBoxLogCursor(cursor: string): number | undefined {
  const digits = cursorPosition(CURSOR_PREFIX, cursor);
  if (digits === undefined || !/^[1-9]\d{0,15}$/.test(digits)) return undefined;
  const id = Number(digits);
  return Number.isSafeInteger(id) ? id : undefined;
}

type BoxLogRow = Pick<
  Selectable<BoxLogsTable>,
  | 'id'
  | 'source'
  | 'equipment_id'
  | 'secured_parking_id'
  | 'fo_user_id'
  | 'smart_key_id'
  | 'type'
  | 'command'
  | 'response'
  | 'offline'
  | 'created_at'
  | 'verified'
  | 'box_seq'
  | 'status'
  | 'received_at'
> &
  OuterJoined<{
    session_id: Selectable<SmartKeysTable>['session_id'];
    key_purpose: Selectable<SmartKeysTable>['purpose'];
    operator: Selectable<OperatorsTable>['name'];
  }>;

/** Box logs newest first (by id), filtered, `limit` a page; the cursor must come from decodeBoxLogCursor. */
export async function operatorBoxLogs(
  store: Store,
  filter: Omit<BoxLogFilter, 'cursor'> & { beforeId?: number; ids?: readonly number[] },
): Promise<BoxLogPage> {
  let query = store.kysely
    .selectFrom('box_logs as b')
    .leftJoin('smart_keys as k', 'k.id', 'b.smart_key_id')
    .leftJoin('operators as o', 'o.id', 'k.operator_id')
    .select([
      'b.id',
      'b.source',
      'b.equipment_id',
      'b.secured_parking_id',
      'b.fo_user_id',
      'b.smart_key_id',
      'k.session_id',
      'k.purpose as key_purpose',
      'o.name as operator',
      'b.type',
      'b.command',
      'b.response',
      'b.offline',
      'b.created_at',
      'b.verified',
      'b.box_seq',
      'b.status',
      'b.received_at',
    ])
    .orderBy('b.id', 'desc')
    .limit(filter.limit + 1);
  if (filter.beforeId !== undefined) query = query.where('b.id', '<', filter.beforeId);
  if (filter.ids !== undefined) query = query.where('b.id', 'in', filter.ids.length > 0 ? [...filter.ids] : [0]);
  if (filter.moduleId !== undefined) query = query.where('b.equipment_id', '=', filter.moduleId);
  if (filter.sessionId !== undefined) query = query.where('k.session_id', '=', filter.sessionId);
  if (filter.status !== undefined)
    query = query.where('b.verified', '=', 1).where('b.status', '=', Status[filter.status]);
  if (filter.verified !== undefined) query = query.where('b.verified', '=', filter.verified ? 1 : 0);
  return pageOf(await query.execute(), filter.limit);
}

function pageOf(rows: readonly BoxLogRow[], limit: number): BoxLogPage {
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  const last = page.at(-1);
  return {
    box_logs: page.map((row) => ({
      ...row,
      offline: row.offline === 1,
      verified: row.verified === 1,
      status: row.verified === 1 && row.status !== null ? (statusName(row.status) ?? null) : null,
      received_at: new Date(row.received_at).toISOString(),
    })),
    next_cursor: more && last ? encodeBoxLogCursor(last.id) : null,
  };
}
