// Another process on the same SQLite file, as an operator command would be:
// a second connection that holds the write lock until released (or the test
// ends), so the app's writes meet "database is locked" for real.
import type { ExecutionContext } from 'ava';
import Database from 'better-sqlite3';

/** Takes the write lock of `databasePath` now; returns its release. */
export function holdWriteLock(t: ExecutionContext, databasePath: string): () => void {
  const other = new Database(databasePath);
  other.exec('BEGIN IMMEDIATE');
  const release = () => {
    if (other.inTransaction) other.exec('ROLLBACK');
    if (other.open) other.close();
  };
  t.teardown(release);
  return release;
}
