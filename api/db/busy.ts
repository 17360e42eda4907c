// SQLite's "database is locked": another process (an operator command on the
// same file) held the write lock past busy_timeout. Not a bug, and the
// statement that met it wrote nothing: HTTP answers 503 with Retry-After,
// MQTT ingestion tries again later without acknowledging.

/** better-sqlite3's SqliteError codes SQLITE_BUSY, SQLITE_BUSY_SNAPSHOT, ... */
export function isDatabaseBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}
