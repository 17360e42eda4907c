// Box-log ingestion's reads and writes on SQLite (ingest-store.ts):
// prepared better-sqlite3 statements, one execution per id or row (the
// fastest thing there, measured: docs/decisions/store-sqlite-and-postgresql.md,
// "The query layer"), on the one connection inside the group commit's
// transaction. Every promise here is resolved when returned, so a group
// completes within one macrotask and nothing interleaves on the connection.
// Only a control command's settle goes through Kysely (rare: not per log).
import type { ParsedResponse } from '../../firmware-protocol/index.js';
import { ControlAnswers } from '../control/index.js';
import type { Executor, SqliteStore } from '../db/store.js';
import { BoxLogRepository, type StoredBoxLog } from './repository.js';
import type { BoxObservation, BoxRow } from '../boxes/index.js';
import type { ParkingRow } from '../parkings/index.js';
import type { SessionRow } from '../sessions/index.js';
import type { SmartKeyRow } from '../smart-keys/index.js';
import type { IngestStore, OutboxEntry } from './ingest-store.js';

const SESSION_COLUMNS =
  'id, user_id, parking_id, state, start_time, end_time, entrance_remaining_tries, exit_remaining_tries, amount_minor, currency, ended_at';

export class SqliteIngestStore implements IngestStore {
  readonly #logs;
  readonly #user;
  readonly #key;
  readonly #box;
  readonly #parking;
  readonly #session;
  readonly #tries;
  readonly #activate;
  readonly #observation;
  readonly #control;
  readonly #outbox;
  readonly #answers;

  constructor(store: SqliteStore) {
    const db = store.sqlite;
    this.#logs = new BoxLogRepository(db);
    this.#user = db.prepare<[number], { id: number }>('SELECT id FROM users WHERE id = ?');
    this.#key = db.prepare<[number], SmartKeyRow>(
      'SELECT id, user_id, parking_id, session_id, operator_id, type, description, purpose, access_command, module_ids, start_time, end_time, revoked_at FROM smart_keys WHERE id = ?',
    );
    this.#box = db.prepare<[number], BoxRow>('SELECT * FROM boxes WHERE module_id = ?');
    this.#parking = db.prepare<[number], ParkingRow>('SELECT * FROM secured_parkings WHERE id = ?');
    this.#session = db.prepare<[number], SessionRow>(`SELECT ${SESSION_COLUMNS} FROM parking_sessions WHERE id = ?`);
    this.#tries = db.prepare<[number, number, number]>(
      'UPDATE parking_sessions SET entrance_remaining_tries = min(entrance_remaining_tries, ?), exit_remaining_tries = min(exit_remaining_tries, ?) WHERE id = ?',
    );
    this.#activate = db.prepare<[number]>(
      "UPDATE parking_sessions SET state = 'active' WHERE id = ? AND state = 'entering'",
    );
    this.#observation = db.prepare<[number, number, number, number | null, number, number, number]>(
      `UPDATE boxes SET last_seen_at = ?, last_box_seq = ?, last_box_time = ?, box_time_drift_seconds = coalesce(?, box_time_drift_seconds), battery_mv = ?
       WHERE module_id = ? AND (last_box_seq IS NULL OR last_box_seq < ?)`,
    );
    this.#control = db.prepare<[{ next: number; accepted: number | null; module: number }]>(
      `UPDATE boxes SET next_control_seq = max(next_control_seq, @next),
         last_control_seq = CASE WHEN @accepted IS NULL THEN last_control_seq ELSE max(coalesce(last_control_seq, 0), @accepted) END
       WHERE module_id = @module`,
    );
    this.#outbox = db.prepare<[number, number, string, number]>(
      'INSERT INTO forwarding_outbox (box_log_id, parking_id, url, created_at) VALUES (?, ?, ?, ?)',
    );
    this.#answers = new ControlAnswers(store);
  }

  users(_on: Executor, ids: readonly number[]): Promise<number[]> {
    const found: number[] = [];
    for (const id of ids) if (this.#user.get(id) !== undefined) found.push(id);
    return Promise.resolve(found);
  }

  smartKeys(_on: Executor, ids: readonly number[]): Promise<SmartKeyRow[]> {
    return Promise.resolve(rowsOf(ids, (id) => this.#key.get(id)));
  }

  boxes(_on: Executor, moduleIds: readonly number[]): Promise<BoxRow[]> {
    return Promise.resolve(rowsOf(moduleIds, (id) => this.#box.get(id)));
  }

  parkings(_on: Executor, ids: readonly number[]): Promise<ParkingRow[]> {
    return Promise.resolve(rowsOf(ids, (id) => this.#parking.get(id)));
  }

  /** SQLite's write lock (the group's BEGIN IMMEDIATE) serializes writers already. */
  sessionsForUpdate(_on: Executor, ids: readonly number[]): Promise<SessionRow[]> {
    return Promise.resolve(rowsOf(ids, (id) => this.#session.get(id)));
  }

  insertLogs(_on: Executor, logs: readonly StoredBoxLog[]): Promise<{ id: number; duplicate: boolean }[]> {
    return Promise.resolve(logs.map((log) => this.#logs.insert(log)));
  }

  lowerTries(_on: Executor, sessionId: number, entrance: number, exit: number): Promise<void> {
    this.#tries.run(entrance, exit, sessionId);
    return Promise.resolve();
  }

  activate(_on: Executor, sessionId: number): Promise<boolean> {
    return Promise.resolve(this.#activate.run(sessionId).changes === 1);
  }

  noteObservations(_on: Executor, observations: readonly BoxObservation[]): Promise<void> {
    for (const o of observations)
      this.#observation.run(o.seenAt, o.boxSeq, o.boxTime, o.driftSeconds, o.batteryMv, o.moduleId, o.boxSeq);
    return Promise.resolve();
  }

  noteControlSequence(_on: Executor, moduleId: number, sequence: number, accepted: boolean): Promise<void> {
    this.#control.run({ next: sequence + 1, accepted: accepted ? sequence : null, module: moduleId });
    return Promise.resolve();
  }

  settleControlAnswer(
    on: Executor,
    moduleId: number,
    response: ParsedResponse,
    commandNonce: Buffer,
    nowMs: number,
  ): Promise<void> {
    return this.#answers.settle(on, moduleId, response, commandNonce, nowMs);
  }

  enqueueOutbox(_on: Executor, entries: readonly OutboxEntry[], nowMs: number): Promise<void> {
    for (const entry of entries) this.#outbox.run(entry.boxLogId, entry.parkingId, entry.url, nowMs);
    return Promise.resolve();
  }
}

function rowsOf<R>(ids: readonly number[], get: (id: number) => R | undefined): R[] {
  const rows: R[] = [];
  for (const id of ids) {
    const row = get(id);
    if (row !== undefined) rows.push(row);
  }
  return rows;
}
