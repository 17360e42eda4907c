// Durable control commands (migration 9): what the service owes each box,
// in the order it must arrive. Written by admin commands (any process),
// delivered by the API's dispatcher, settled by the ingestion of the box's
// verified answer (in whichever process ingests it).
import type { Db } from '../db/open.js';

export type ControlKind = 'REVOKE' | 'SET_ISSUER';
export type ControlPurpose = 'revoke' | 'set_access' | 'rotate_install' | 'rotate_drop';
export type ControlState = 'pending' | 'done' | 'failed';

/** REVOKE: entries; SET_ISSUER: public keys in hex (previous null: none). */
export type ControlBody =
  | { readonly entries: readonly { readonly key_id: number; readonly until: number }[] }
  | { readonly issuer_key: string; readonly issuer_key_previous: string | null };

export interface ControlCommandRow {
  id: number;
  module_id: number;
  kind: ControlKind;
  /** JSON of a ControlBody. */
  body: string;
  operation: string;
  purpose: ControlPurpose;
  parking_id: number;
  smart_key_id: number | null;
  requested_by: string;
  state: ControlState;
  attempts: number;
  replays: number;
  control_seq: number | null;
  in_flight_until: number | null;
  next_attempt_at: number;
  last_status: string | null;
  last_error: string | null;
  last_attempt_at: number | null;
  created_at: number;
  finished_at: number | null;
}

export interface NewControlCommand {
  moduleId: number;
  kind: ControlKind;
  body: ControlBody;
  operation: string;
  purpose: ControlPurpose;
  parkingId: number;
  smartKeyId?: number;
  requestedBy: string;
}

export class ControlCommandRepository {
  private readonly insertRow;
  private readonly byId;
  private readonly ofOperation;
  private readonly heads;
  private readonly bySequence;
  private readonly claimRow;
  private readonly settleRow;
  private readonly retryRow;
  private readonly unfinishedOfOperation;
  private readonly operationExists;

  constructor(private readonly db: Db) {
    this.insertRow = db.prepare<
      [number, ControlKind, string, string, ControlPurpose, number, number | null, string, number, number]
    >(
      `INSERT INTO control_commands (module_id, kind, body, operation, purpose, parking_id, smart_key_id, requested_by, next_attempt_at, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (operation, module_id) DO NOTHING`,
    );
    this.byId = db.prepare<[number], ControlCommandRow>('SELECT * FROM control_commands WHERE id = ?');
    this.ofOperation = db.prepare<[string], ControlCommandRow>(
      'SELECT * FROM control_commands WHERE operation = ? ORDER BY module_id',
    );
    // The first pending command of every box: only it may be sent (in order).
    this.heads = db.prepare<[], ControlCommandRow>(
      `SELECT c.* FROM control_commands c
       JOIN (SELECT module_id, min(id) AS id FROM control_commands WHERE state = 'pending' GROUP BY module_id) head ON head.id = c.id
       ORDER BY c.id`,
    );
    this.bySequence = db.prepare<[number, number, ControlKind], ControlCommandRow>(
      "SELECT * FROM control_commands WHERE module_id = ? AND control_seq = ? AND kind = ? AND state = 'pending'",
    );
    this.claimRow = db.prepare<[number, number, number, number, number]>(
      `UPDATE control_commands SET control_seq = ?, attempts = attempts + 1, in_flight_until = ?, last_attempt_at = ?
       WHERE id = ? AND state = 'pending' AND (in_flight_until IS NULL OR in_flight_until <= ?)`,
    );
    this.settleRow = db.prepare<{
      id: number;
      state: ControlState;
      status: string | null;
      error: string | null;
      next: number;
      replays: number;
      finished: number | null;
    }>(
      `UPDATE control_commands SET state = @state, last_status = @status, last_error = @error, next_attempt_at = @next,
         replays = @replays, in_flight_until = NULL, finished_at = @finished
       WHERE id = @id`,
    );
    this.retryRow = db.prepare<[string | null, number, number, number]>(
      `UPDATE control_commands SET last_error = ?, next_attempt_at = ?, in_flight_until = NULL
       WHERE id = ? AND state = 'pending' AND control_seq = ? AND in_flight_until IS NOT NULL`,
    );
    this.unfinishedOfOperation = db.prepare<[string], { count: number }>(
      "SELECT count(*) AS count FROM control_commands WHERE operation = ? AND state != 'done'",
    );
    this.operationExists = db.prepare<[string], { one: number }>(
      'SELECT 1 AS one FROM control_commands WHERE operation = ? LIMIT 1',
    );
  }

  /** Queues a command; nothing when the operation already has one for this box. */
  insert(command: NewControlCommand, nowMs: number): void {
    this.insertRow.run(
      command.moduleId,
      command.kind,
      JSON.stringify(command.body),
      command.operation,
      command.purpose,
      command.parkingId,
      command.smartKeyId ?? null,
      command.requestedBy,
      nowMs,
      nowMs,
    );
  }

  findById(id: number): ControlCommandRow | undefined {
    return this.byId.get(id);
  }

  listOfOperation(operation: string): ControlCommandRow[] {
    return this.ofOperation.all(operation);
  }

  hasOperation(operation: string): boolean {
    return this.operationExists.get(operation) !== undefined;
  }

  /** The first pending command of each box that has one. */
  pendingHeads(): ControlCommandRow[] {
    return this.heads.all();
  }

  /** The pending command a box answered: its sequence and kind. */
  findSent(moduleId: number, controlSeq: number, kind: ControlKind): ControlCommandRow | undefined {
    return this.bySequence.get(moduleId, controlSeq, kind);
  }

  /** Marks a command sent with `controlSeq`, in flight until `untilMs`;
   * false when it is no longer pending or another process has it in flight. */
  claim(id: number, controlSeq: number, nowMs: number, untilMs: number): boolean {
    return this.claimRow.run(controlSeq, untilMs, nowMs, id, nowMs).changes === 1;
  }

  settle(
    id: number,
    outcome: {
      state: ControlState;
      status: string | null;
      error: string | null;
      nextAttemptAt: number;
      replays: number;
    },
    nowMs: number,
  ): void {
    this.settleRow.run({
      id,
      state: outcome.state,
      status: outcome.status,
      error: outcome.error,
      next: outcome.nextAttemptAt,
      replays: outcome.replays,
      finished: outcome.state === 'pending' ? null : nowMs,
    });
  }

  /** No (believable) answer to the send with `controlSeq`: tried again at
   * `nextAttemptAt`. Nothing when its answer settled it meanwhile. */
  retryLater(id: number, controlSeq: number, error: string, nextAttemptAt: number): void {
    this.retryRow.run(error, nextAttemptAt, id, controlSeq);
  }

  /** Commands of the operation not done yet (pending or failed). */
  unfinished(operation: string): number {
    return this.unfinishedOfOperation.get(operation)?.count ?? 0;
  }

  transaction<T>(work: () => T): T {
    return this.db.transaction(work).immediate();
  }
}
