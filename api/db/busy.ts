// The database is busy, not broken: another process held what this
// statement needed for too long, or the engine chose this transaction as the
// loser of a conflict. The statement (or its whole transaction) wrote
// nothing: HTTP answers 503 with Retry-After, MQTT ingestion tries again
// later without acknowledging.
//
// - SQLite: "database is locked" (SQLITE_BUSY and its extended codes):
//   another process (an operator command on the same file) held the write
//   lock past busy_timeout.
// - PostgreSQL (SQLSTATE codes on pg's DatabaseError): a lock not granted
//   within lock_timeout (55P03), a serialization failure (40001) or a
//   deadlock (40P01), where the server rolled this transaction back and the
//   other one goes on; too many connections (53300) and a server still
//   starting up (57P03) pass with time too, as does a connection the server
//   ended (57P01 admin shutdown, 57P02 crash shutdown: a restart, a failover
//   of a managed service) or could not keep (class 08, connection
//   exceptions): the transaction did not commit, the pool reconnects.
// - This process's own queue in front of a lock (one-at-a-time.ts): a wait
//   there past its bound, before any statement ran (DatabaseBusyError).

const POSTGRES_BUSY = new Set(['55P03', '40001', '40P01', '53300', '57P03', '57P01', '57P02']);
const POSTGRES_CONNECTION_EXCEPTION = '08';

/** A wait of this process for its turn at the database passed its bound; nothing was run. */
export class DatabaseBusyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatabaseBusyError';
  }
}

/** Whether `error` says the database is busy (a retry later may succeed). */
export function isDatabaseBusy(error: unknown): boolean {
  if (error instanceof DatabaseBusyError) return true;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return (
    code.startsWith('SQLITE_BUSY') ||
    POSTGRES_BUSY.has(code) ||
    (code.length === 5 && code.startsWith(POSTGRES_CONNECTION_EXCEPTION))
  );
}
