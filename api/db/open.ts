// Opens the SQLite file the API and the operator CLI share.
//
// To write (the API, `start`, admin commands that write): folder and file
// created if missing, refused if it is another program's database or one from
// a newer parkbench (checked before anything writes to it), then WAL (readers
// never block the writer), foreign keys on, a busy timeout so the CLI and a
// running API can write the same file, then migrations.
//
// To read (admin commands that only read): never created, never migrated,
// opened read-only so a file or folder this user may only read works too.
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { checkSchema, checkSchemaCurrent, migrate } from './migrate-sqlite.js';
import { DatabaseRefusedError } from './refused.js';

export type Db = Database.Database;

/** SQLite's wait for another connection's lock unless told otherwise. */
export const DEFAULT_BUSY_TIMEOUT_MS = 5_000;

export interface OpenOptions {
  busyTimeoutMs?: number;
  /** Read only: the database must exist and be migrated already. */
  readonly?: boolean;
}

export function openDatabase(
  path: string,
  { busyTimeoutMs = DEFAULT_BUSY_TIMEOUT_MS, readonly = false }: OpenOptions = {},
): Db {
  if (readonly) return openReadOnly(path, busyTimeoutMs);
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  try {
    db.pragma(`busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
    checkSchema(db, undefined, path);
    useWal(db, busyTimeoutMs);
    db.pragma('foreign_keys = ON');
    db.pragma('synchronous = NORMAL'); // safe with WAL: a crash loses at most the last commits, never consistency
    // A checkpoint runs inside the commit that crosses this many WAL pages, on
    // the event loop. SQLite's 1,000 (a 4 MB copy) stalled requests long
    // enough to set session creation's p99 (perf:api: 23 to 29 ms against
    // 17 ms with 200); smaller ones cost no measurable throughput.
    db.pragma('wal_autocheckpoint = 200');
    migrate(db);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/**
 * Switches the file to WAL (it stays so). Switching needs every other
 * connection's lock gone, and SQLite answers SQLITE_BUSY at once instead of
 * waiting on the busy timeout: two processes opening one fresh file together
 * (two APIs, the API and an admin command) failed there, one round in three
 * of test/api/db/migrations/migration-race.test.ts. So the switch is retried, within the busy
 * timeout, a few milliseconds apart (a synchronous wait, as the busy timeout's
 * own, and only while the file is being opened).
 */
function useWal(db: Db, busyTimeoutMs: number): void {
  const deadline = Date.now() + busyTimeoutMs;
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() >= deadline) throw error;
      Atomics.wait(pause, 0, 0, 5);
    }
  }
}

/** What Atomics.wait sleeps on (nothing ever wakes it: it times out). */
const pause = new Int32Array(new SharedArrayBuffer(4));

function openReadOnly(path: string, busyTimeoutMs: number): Db {
  if (!existsSync(path))
    throw new DatabaseRefusedError(
      `no database at ${path} (a command that only reads creates none: check --database or DATABASE_PATH)`,
    );
  let db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    db.pragma(`busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
    checkSchemaCurrent(db, undefined, path);
  } catch (error) {
    db.close();
    if (!cannotMakeSharedMemory(error) || walHasFrames(path)) throw error;
    db = snapshotOf(path);
    try {
      checkSchemaCurrent(db, undefined, path);
    } catch (refused) {
      db.close();
      throw refused;
    }
  }
  return db;
}

/**
 * A read-only connection to a WAL database needs its -shm file; SQLite cannot
 * make one in a folder this user may not write, and refuses (SQLite's "WAL
 * databases on read-only media"). Without a URI (better-sqlite3 builds
 * without SQLITE_USE_URI, so no `immutable=1`) the way left is to read the
 * file into memory: right when the file is the whole database, that is when
 * no -wal file holds commits not yet copied into it.
 */
function cannotMakeSharedMemory(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === 'SQLITE_READONLY_DIRECTORY' || code === 'SQLITE_READONLY_CANTINIT' || code === 'SQLITE_CANTOPEN';
}

function walHasFrames(path: string): boolean {
  try {
    return statSync(`${path}-wal`).size > 0;
  } catch {
    return false;
  }
}

/** The database file as an in-memory, read-only database. */
function snapshotOf(path: string): Db {
  const bytes = readFileSync(path);
  // Bytes 18 and 19 of the header say WAL (2); an in-memory database must be
  // in rollback mode (1) to be read.
  if (bytes.length >= 20) {
    bytes[18] = 1;
    bytes[19] = 1;
  }
  return new Database(bytes, { readonly: true });
}
