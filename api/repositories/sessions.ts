// Parking sessions (spec 2.5). Times in ms since the epoch; money in minor units.
import type { Db } from '../db/open.js';

export type SessionState = 'entering' | 'active' | 'exiting' | 'finished';

/** States of a session the driver still holds (GET .../current). */
export const OPEN_STATES: readonly SessionState[] = ['entering', 'active', 'exiting'];

export interface SessionRow {
  id: number;
  user_id: number;
  parking_id: number;
  state: SessionState;
  start_time: number;
  end_time: number;
  entrance_remaining_tries: number;
  exit_remaining_tries: number;
  amount_minor: number;
  currency: string;
  /** When the session ended (finalize or a verified exit); null while open. */
  ended_at: number | null;
}

export interface NewSession {
  userId: number;
  parkingId: number;
  startTime: number;
  endTime: number;
  tries: number;
  amountMinor: number;
  currency: string;
}

export class SessionRepository {
  private readonly byId;
  private readonly openOfUser;
  private readonly insertRow;
  private readonly stateUpdate;
  private readonly endUpdate;
  private readonly triesUpdate;

  constructor(db: Db) {
    const columns =
      'id, user_id, parking_id, state, start_time, end_time, entrance_remaining_tries, exit_remaining_tries, amount_minor, currency, ended_at';
    this.byId = db.prepare<[number], SessionRow>(`SELECT ${columns} FROM parking_sessions WHERE id = ?`);
    this.openOfUser = db.prepare<[number], SessionRow>(
      `SELECT ${columns} FROM parking_sessions WHERE user_id = ? AND state <> 'finished'`,
    );
    this.insertRow = db.prepare<[number, number, number, number, number, number, number, string, number]>(
      `INSERT INTO parking_sessions (user_id, parking_id, state, start_time, end_time, entrance_remaining_tries, exit_remaining_tries, amount_minor, currency, created_at)
       VALUES (?, ?, 'entering', ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.stateUpdate = db.prepare<[SessionState, number]>('UPDATE parking_sessions SET state = ? WHERE id = ?');
    this.endUpdate = db.prepare<[SessionState, number, number, number, number, number]>(
      'UPDATE parking_sessions SET state = ?, end_time = ?, ended_at = ?, amount_minor = ?, exit_remaining_tries = ? WHERE id = ?',
    );
    this.triesUpdate = db.prepare<[number, number, number]>(
      'UPDATE parking_sessions SET entrance_remaining_tries = ?, exit_remaining_tries = ? WHERE id = ?',
    );
  }

  findById(id: number): SessionRow | undefined {
    return this.byId.get(id);
  }

  findOpenOfUser(userId: number): SessionRow | undefined {
    return this.openOfUser.get(userId);
  }

  /** Inserts an `entering` session; undefined when the driver already has an
   * open one (the partial unique index, so this holds across processes). */
  insert(session: NewSession, nowMs: number): number | undefined {
    try {
      const result = this.insertRow.run(
        session.userId,
        session.parkingId,
        session.startTime,
        session.endTime,
        session.tries,
        session.tries,
        session.amountMinor,
        session.currency,
        nowMs,
      );
      return Number(result.lastInsertRowid);
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') return undefined;
      throw error;
    }
  }

  setState(id: number, state: SessionState): void {
    this.stateUpdate.run(state, id);
  }

  /** Ends a session: its end time, final amount and (maybe fresh) exit tries. */
  end(id: number, state: SessionState, endTime: number, amountMinor: number, exitTries: number, nowMs: number): void {
    this.endUpdate.run(state, endTime, nowMs, amountMinor, exitTries, id);
  }

  setTries(id: number, entrance: number, exit: number): void {
    this.triesUpdate.run(entrance, exit, id);
  }
}
