// The end of a session by a verified exit (effects.ts): the session
// service's own end (final amount, an overstay payment when the payments so
// far do not cover it, no exit key: the car is leaving), on the group
// commit's transaction. Every query of it runs on `on`: on SQLite the group
// holds the one connection, on PostgreSQL the unit's transaction holds the
// session's row.
import type { Executor } from '../db/store.js';
import { endSession, type SessionRow, type SessionServiceDeps } from '../sessions/index.js';

/** Ends `session` at `endMs` (the exit's time) on `on`; its row as ended, or
 * undefined when it had ended already (another process's exit or finalize). */
export type EndAtExit = (on: Executor, session: SessionRow, endMs: number) => Promise<SessionRow | undefined>;

export function sessionEnd(service: SessionServiceDeps): EndAtExit {
  return async (on, session, endMs) => {
    const result = await endSession(service, on, session, endMs, false);
    return result.ended ? result.session : undefined;
  };
}
