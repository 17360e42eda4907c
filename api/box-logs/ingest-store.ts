// The reads and writes of box-log ingestion: set-based and async, one
// implementation per engine (ingest-store-sqlite.ts, ingest-store-postgres.ts),
// every method run on the group commit's transaction (`on`). The logic
// (resolve ids, verify, dedupe, decide a session's change) is ingest.ts and
// effects.ts, pure over the rows read here, the same on both engines.
import type { ParsedResponse } from '../../firmware-protocol/index.js';
import type { Executor } from '../db/store.js';
import type { BoxObservation, BoxRow } from '../boxes/index.js';
import type { StoredBoxLog } from './repository.js';
import type { ParkingRow } from '../parkings/index.js';
import type { SessionRow } from '../sessions/index.js';
import type { SmartKeyRow } from '../smart-keys/index.js';

/** A forwarding_outbox row to add (api/forwarding/outbox.ts groups and sends them). */
export interface OutboxEntry {
  boxLogId: number;
  parkingId: number;
  url: string;
}

export interface IngestStore {
  /** The ids among `ids` that are users. */
  users(on: Executor, ids: readonly number[]): Promise<number[]>;
  smartKeys(on: Executor, ids: readonly number[]): Promise<SmartKeyRow[]>;
  boxes(on: Executor, moduleIds: readonly number[]): Promise<BoxRow[]>;
  parkings(on: Executor, ids: readonly number[]): Promise<ParkingRow[]>;
  /** The sessions, locked for the rest of the transaction on PostgreSQL
   * (`FOR NO KEY UPDATE`, in id order), so that two processes moving one session
   * serialize on its row; SQLite's write lock serializes them already. */
  sessionsForUpdate(on: Executor, ids: readonly number[]): Promise<SessionRow[]>;
  /** Stores the logs, in order; a verified one already stored (the partial
   * unique index) stores nothing and answers the stored id, duplicate. */
  insertLogs(on: Executor, logs: readonly StoredBoxLog[]): Promise<{ id: number; duplicate: boolean }[]>;
  /** Lowers a session's tries (never raises them: a stale value changes nothing). */
  lowerTries(on: Executor, sessionId: number, entrance: number, exit: number): Promise<void>;
  /** entering -> active; false when the session was no longer entering. */
  activate(on: Executor, sessionId: number): Promise<boolean>;
  /** Each box's newest observation: written only over an older box_seq. */
  noteObservations(on: Executor, observations: readonly BoxObservation[]): Promise<void>;
  /** docs/protocol.md, after step 11: next_control_seq past an echoed control sequence (never back). */
  noteControlSequence(on: Executor, moduleId: number, sequence: number, accepted: boolean): Promise<void>;
  /** The settle of a control command by a box's verified answer to the
   * frame with `commandNonce` (api/control/settle.ts). */
  settleControlAnswer(
    on: Executor,
    moduleId: number,
    response: ParsedResponse,
    commandNonce: Buffer,
    nowMs: number,
  ): Promise<void>;
  enqueueOutbox(on: Executor, entries: readonly OutboxEntry[], nowMs: number): Promise<void>;
}

/** Ids not seen before, once each. */
function missing<V>(known: Map<number, V | undefined>, ids: Iterable<number>): number[] {
  const wanted = new Set<number>();
  for (const id of ids) if (!known.has(id)) wanted.add(id);
  return [...wanted];
}

/** The ids of rows to read, by table. */
export interface WantedIds {
  users?: Iterable<number>;
  smartKeys?: Iterable<number>;
  boxes?: Iterable<number>;
  parkings?: Iterable<number>;
}

/**
 * The rows a group of box logs reads, each read once (50 logs of one box, or
 * the few hundred MQTT messages of one turn, read it once): `load` reads the
 * ids not read yet, one query a table; the accessors answer from what was
 * read (undefined: no such row). Valid within one transaction: ingestion
 * writes none of the columns read here but the sessions', which it keeps up
 * to date itself.
 */
export class BoxLogLookups {
  readonly #users = new Map<number, true | undefined>();
  readonly #keys = new Map<number, SmartKeyRow | undefined>();
  readonly #boxes = new Map<number, BoxRow | undefined>();
  readonly #parkings = new Map<number, ParkingRow | undefined>();
  readonly #sessions = new Map<number, SessionRow | undefined>();

  constructor(private readonly rows: IngestStore) {}

  async load(on: Executor, wanted: WantedIds): Promise<void> {
    const users = missing(this.#users, wanted.users ?? []);
    if (users.length > 0)
      fill(
        this.#users,
        users,
        (await this.rows.users(on, users)).map((id) => ({ id })),
        (row) => row.id,
        () => true as const,
      );
    const keys = missing(this.#keys, wanted.smartKeys ?? []);
    if (keys.length > 0) fill(this.#keys, keys, await this.rows.smartKeys(on, keys), (row) => row.id);
    const boxes = missing(this.#boxes, wanted.boxes ?? []);
    if (boxes.length > 0) fill(this.#boxes, boxes, await this.rows.boxes(on, boxes), (row) => row.module_id);
    const parkings = missing(this.#parkings, wanted.parkings ?? []);
    if (parkings.length > 0) fill(this.#parkings, parkings, await this.rows.parkings(on, parkings), (row) => row.id);
  }

  /** Reads (and on PostgreSQL locks) the sessions not read yet. */
  async loadSessions(on: Executor, ids: Iterable<number>): Promise<void> {
    const wanted = missing(this.#sessions, ids);
    if (wanted.length > 0) fill(this.#sessions, wanted, await this.rows.sessionsForUpdate(on, wanted), (row) => row.id);
  }

  user(id: number): boolean {
    return this.#users.get(id) === true;
  }

  smartKey(id: number): SmartKeyRow | undefined {
    return this.#keys.get(id);
  }

  box(moduleId: number): BoxRow | undefined {
    return this.#boxes.get(moduleId);
  }

  parking(id: number): ParkingRow | undefined {
    return this.#parkings.get(id);
  }

  session(id: number): SessionRow | undefined {
    return this.#sessions.get(id);
  }

  /** A session as this group changed it. */
  updated(session: SessionRow): void {
    this.#sessions.set(session.id, session);
  }
}

function fill<R, V = R>(
  map: Map<number, V | undefined>,
  ids: readonly number[],
  rows: readonly R[],
  idOf: (row: R) => number,
  valueOf: (row: R) => V = (row) => row as unknown as V,
): void {
  for (const id of ids) map.set(id, undefined);
  for (const row of rows) map.set(idOf(row), valueOf(row));
}
