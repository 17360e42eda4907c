// A transaction PostgreSQL rolled back as the loser of a race: a deadlock
// (40P01: the server broke a cycle of row locks by failing one of its
// transactions) or a serialization failure (40001). Nothing of it
// committed, and run again it usually finds the winner's locks released:
// the store runs it again itself, a bounded number of times, before the
// caller sees a busy database (api/db/busy.ts: 503, MQTT tries later).
// The row locks of parkbench's transactions are taken in one order (rows
// of one table by id, verified box logs by box and box_seq) and as FOR NO
// KEY UPDATE, which the foreign keys pointing at a row do not wait for, so
// such races are rare; this is what is left.

const LOST_RACE = new Set(['40P01', '40001']);

/** Runs of a transaction, the first included, before a lost race is the caller's. */
export const RACE_ATTEMPTS = 3;

export function isLostRace(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && LOST_RACE.has(code);
}

/** `run` (a whole transaction: its work must be safe to run again, as a
 * rolled-back transaction is), again while it loses a race, RACE_ATTEMPTS
 * times at most; `onRetry` hears of each run again. */
export async function retryingLostRaces<T>(run: () => Promise<T>, onRetry: () => void = () => undefined): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if (!isLostRace(error) || attempt >= RACE_ATTEMPTS) throw error;
      onRetry();
    }
  }
}
