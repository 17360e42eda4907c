// What the stream's messages hold, read from the store when a flush (or a
// snapshot) needs it, never per raw event: a box entry as in GET
// /api/operator/parkings (plus `live` and `parking_id`), a session as in GET
// /api/operator/sessions, a parking's forwarding as in GET
// /api/operator/parkings/:id/forwarding, the newest box logs as stream
// items. A flush reads all its boxes in one statement and all its sessions
// in one (on PostgreSQL each statement is a round trip).
import type { Store } from '../../db/store.js';
import { forwardingStatus, type ForwardingStatus } from '../../forwarding/index.js';
import { BoxEntries } from '../box-entries.js';
import {
  operatorBoxLogs,
  operatorSessionsById,
  operatorSessionsOfDay,
  type OperatorBox,
  type OperatorBoxLog,
  type OperatorParking,
  type OperatorSession,
} from '../views.js';
import { DomainError } from '../../http/domain-error.js';
import { parseCreatedAt } from '../../http/time.js';
import type { LiveBoxStates, LiveState } from '../../events/live-states.js';
import type { BoxLogStreamItem } from '../../events/types.js';

export type LiveBox = OperatorBox & { live: LiveState | null };
export type LiveParking = Omit<OperatorParking, 'boxes'> & { boxes: LiveBox[] };
export type ForwardingEntry = ForwardingStatus & { parking_id: number };

export interface Snapshot {
  server_time: string;
  parkings: LiveParking[];
  /** The newest SNAPSHOT_SESSIONS sessions of the day, newest first. */
  sessions: OperatorSession[];
  /** How many sessions the day has: more than `sessions` holds when cut. */
  sessions_total: number;
  /** True when `sessions` holds only the newest SNAPSHOT_SESSIONS of them. */
  sessions_truncated: boolean;
  box_logs: BoxLogStreamItem[];
  forwarding: ForwardingEntry[];
}

/** Box logs in a snapshot (the newest, oldest first). */
export const SNAPSHOT_BOX_LOGS = 100;
/** Sessions of the day in a snapshot at most (the newest): what a snapshot
 * costs to read, render and send stays bounded, whatever the day holds. */
export const SNAPSHOT_SESSIONS = 200;

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

/** The entities a flush sends, by key. */
export interface FlushKeys {
  readonly boxes: Iterable<number>;
  readonly sessions: Iterable<number>;
  readonly parkings: Iterable<number>;
}

/** What they render to; an entity no longer there is absent (a parking's forwarding: none). */
export interface Rendered {
  readonly boxes: ReadonlyMap<number, LiveBox>;
  readonly sessions: ReadonlyMap<number, OperatorSession>;
  readonly forwarding: ReadonlyMap<number, ForwardingEntry[]>;
}

/** Box logs read in one query by id at most. */
const BOX_LOGS_READ_AT_ONCE = 1_000;

export class StreamRenderer {
  readonly #boxes: BoxEntries;

  constructor(
    private readonly store: Store,
    private readonly live: Pick<LiveBoxStates, 'of'>,
  ) {
    this.#boxes = new BoxEntries(store);
  }

  /** The boxes (as in GET /api/operator/parkings, with `parking_id` and
   * `live`; the revoked keys they take as of `nowMs`), sessions and
   * parkings' forwarding of a flush. */
  async render(keys: FlushKeys, nowMs: number): Promise<Rendered> {
    const boxes = new Map<number, LiveBox>();
    for (const [moduleId, entry] of await this.#boxes.boxes([...keys.boxes], nowMs))
      boxes.set(moduleId, { ...entry, live: this.live.of(moduleId) });
    const sessions = await operatorSessionsById(this.store, [...keys.sessions]);
    const forwarding = new Map<number, ForwardingEntry[]>();
    for (const parkingId of keys.parkings) forwarding.set(parkingId, await this.#forwarding(parkingId));
    return { boxes, sessions, forwarding };
  }

  /** The stream items of the box logs with these ids, oldest first (another
   * process stored them: relay.ts), those that exist. */
  async boxLogs(ids: readonly number[]): Promise<BoxLogStreamItem[]> {
    const items: BoxLogStreamItem[] = [];
    for (let start = 0; start < ids.length; start += BOX_LOGS_READ_AT_ONCE) {
      const chunk = ids.slice(start, start + BOX_LOGS_READ_AT_ONCE);
      const page = await operatorBoxLogs(this.store, { ids: chunk, limit: chunk.length });
      items.push(...page.box_logs.reverse().map(streamItemOf));
    }
    return items;
  }

  async snapshot(nowMs: number): Promise<Snapshot> {
    const startOfDay = Math.floor(nowMs / 86_400_000) * 86_400_000; // UTC
    const parkings = await this.#boxes.parkings(nowMs);
    const sessions = await operatorSessionsOfDay(this.store, startOfDay, SNAPSHOT_SESSIONS);
    const logs = await operatorBoxLogs(this.store, { limit: SNAPSHOT_BOX_LOGS });
    const forwarding = await forwardingStatus(this.store, undefined);
    return {
      server_time: new Date(nowMs).toISOString(),
      parkings: withLive(parkings, this.live),
      sessions: sessions.sessions,
      sessions_total: sessions.total,
      sessions_truncated: sessions.total > sessions.sessions.length,
      box_logs: logs.box_logs.reverse().map(streamItemOf),
      forwarding: forwarding,
    };
  }

  /** A parking's forwarding, one entry per URL (none when it forwards nowhere or is gone). */
  async #forwarding(parkingId: number): Promise<ForwardingEntry[]> {
    try {
      return await forwardingStatus(this.store, parkingId);
    } catch (error) {
      if (error instanceof DomainError && error.kind === 'not_found') return []; // the parking is gone: nothing to show
      throw error;
    }
  }
}
