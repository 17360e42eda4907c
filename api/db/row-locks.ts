// How a service asks for a row lock, the same on both engines: the store
// gives its own. On PostgreSQL a row read for a change is locked until its
// transaction ends, FOR NO KEY UPDATE unless the caller says FOR UPDATE
// (lost-race.ts: the foreign keys pointing at a row do not wait for FOR NO
// KEY UPDATE). On SQLite nothing is added: every write transaction is a
// BEGIN IMMEDIATE (api/db/kysely-sqlite.ts, the group commit), which holds
// the file's write lock already, so one writer runs at a time.
import type { SelectQueryBuilder } from 'kysely';

export interface RowLock<TB> {
  /** FOR UPDATE instead of FOR NO KEY UPDATE. */
  readonly strength?: 'no key update' | 'update';
  /** Only the rows of this table (an alias of the query's). */
  readonly of?: TB & string;
  /** SKIP LOCKED: rows another transaction holds are left out instead of waited for. */
  readonly skipLocked?: boolean;
}

export interface RowLocks {
  /** `query`, the rows it reads locked until its transaction ends. */
  lockForUpdate<DB, TB extends keyof DB, O>(
    query: SelectQueryBuilder<DB, TB, O>,
    lock?: RowLock<TB>,
  ): SelectQueryBuilder<DB, TB, O>;
  /** Takes the locks of `query` only, its rows not wanted (SQLite: nothing to run). */
  takeRowLocks<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>, lock?: RowLock<TB>): Promise<void>;
}

export const sqliteRowLocks: RowLocks = {
  lockForUpdate: (query) => query,
  takeRowLocks: () => Promise.resolve(),
};

export const postgresRowLocks: RowLocks = {
  lockForUpdate: postgresLock,
  async takeRowLocks(query, lock) {
    await postgresLock(query, lock).execute();
  },
};

function postgresLock<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  lock: RowLock<TB> = {},
): SelectQueryBuilder<DB, TB, O> {
  const locked = lock.strength === 'update' ? query.forUpdate(lock.of) : query.forNoKeyUpdate(lock.of);
  return lock.skipLocked === true ? locked.skipLocked() : locked;
}
