// A unique constraint refused an insert or update: SQLite's
// SQLITE_CONSTRAINT_UNIQUE (better-sqlite3's error code) or PostgreSQL's
// unique_violation, SQLSTATE 23505. The repositories that insert a row whose
// key a concurrent request may take first (a user's email, an operator's name)
// answer "taken" on either engine instead of failing.

export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505';
}
