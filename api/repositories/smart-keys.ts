// Smart keys (spec 2.6): the access command (ACCESS or ACCESS_SIGNED) is stored so every GET
// returns the same bytes.
import type { Db } from '../db/open.js';

/** `operator`: a one-off ACCESS an operator sent (api/operators/operator-access.ts): no driver, no session. */
export type KeyPurpose = 'session' | 'exit' | 'operator';

export interface SmartKeyRow {
  id: number;
  /** The driver; null for an operator's key. */
  user_id: number | null;
  parking_id: number;
  session_id: number | null;
  /** The operator who sent an `operator` key; null otherwise (or once that operator is removed). */
  operator_id: number | null;
  type: string;
  description: string | null;
  purpose: KeyPurpose;
  access_command: Buffer;
  /** JSON array of module ids. */
  module_ids: string;
  start_time: number;
  end_time: number;
  /** When an operator revoked it (ms), else null. */
  revoked_at: number | null;
}

export interface NewSmartKey {
  /** Null for an operator's key (and then operatorId is set). */
  userId: number | null;
  parkingId: number;
  sessionId: number | null;
  operatorId?: number;
  description: string;
  purpose: KeyPurpose;
  moduleIds: readonly number[];
  startTime: number;
  endTime: number;
}

export class SmartKeyRepository {
  private readonly byId;
  private readonly ofUser;
  private readonly latestOfSession;
  private readonly insertRow;
  private readonly commandUpdate;
  private readonly revokeUpdate;

  constructor(db: Db) {
    const columns =
      'id, user_id, parking_id, session_id, operator_id, type, description, purpose, access_command, module_ids, start_time, end_time, revoked_at';
    this.byId = db.prepare<[number], SmartKeyRow>(`SELECT ${columns} FROM smart_keys WHERE id = ?`);
    this.ofUser = db.prepare<[number], SmartKeyRow>(`SELECT ${columns} FROM smart_keys WHERE user_id = ? ORDER BY id`);
    this.latestOfSession = db.prepare<[number], SmartKeyRow>(
      `SELECT ${columns} FROM smart_keys WHERE session_id = ? ORDER BY id DESC LIMIT 1`,
    );
    this.insertRow = db.prepare<
      [number | null, number, number | null, number | null, string, string, KeyPurpose, string, number, number, number]
    >(
      `INSERT INTO smart_keys (user_id, parking_id, session_id, operator_id, type, description, purpose, access_command, module_ids, start_time, end_time, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, x'', ?, ?, ?, ?)`,
    );
    this.commandUpdate = db.prepare<[Buffer, string | null, number]>(
      'UPDATE smart_keys SET access_command = ?, signed_by = ? WHERE id = ?',
    );
    this.revokeUpdate = db.prepare<[number, number]>(
      'UPDATE smart_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL',
    );
  }

  findById(id: number): SmartKeyRow | undefined {
    return this.byId.get(id);
  }

  listOfUser(userId: number): SmartKeyRow[] {
    return this.ofUser.all(userId);
  }

  latestOf(sessionId: number): SmartKeyRow | undefined {
    return this.latestOfSession.get(sessionId);
  }

  /** Inserts a key without its command (the command seals the key's id, so
   * it is known only now); call setCommand in the same transaction. */
  insert(key: NewSmartKey, nowMs: number): number {
    const result = this.insertRow.run(
      key.userId,
      key.parkingId,
      key.sessionId,
      key.operatorId ?? null,
      key.purpose === 'operator' ? 'operator_access' : 'session_access',
      key.description,
      key.purpose,
      JSON.stringify(key.moduleIds),
      key.startTime,
      key.endTime,
      nowMs,
    );
    return Number(result.lastInsertRowid);
  }

  /** `signedBy`: the issuer public key (hex) that signed an ACCESS_SIGNED; null for a sealed ACCESS. */
  setCommand(id: number, command: Buffer, signedBy: string | null): void {
    this.commandUpdate.run(command, signedBy, id);
  }

  /** Marks a key revoked at `nowMs`; false when it already was. */
  revoke(id: number, nowMs: number): boolean {
    return this.revokeUpdate.run(nowMs, id).changes === 1;
  }
}
