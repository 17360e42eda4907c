// A second store on a test's database (test/helpers/stores.ts made it): its
// own connection (SQLite) or its own pool (PostgreSQL), as a second process
// would have, for races across processes run in one test. Closed at the
// test's end, before the database is dropped.
import type { ExecutionContext } from 'ava';
import pg from 'pg';
import { openDatabase } from '../../api/db/open.js';
import { postgresStore, sqliteStore, type Store } from '../../api/db/store.js';

export function secondStore(t: ExecutionContext, store: Store): Store {
  if (store.dialect === 'sqlite') {
    const db = openDatabase(store.sqlite.name, { busyTimeoutMs: 10_000 });
    t.teardown(() => db.close());
    return sqliteStore(db);
  }
  // The same options, the int8 parser among them (api/db/postgres-pool.ts).
  const pool = new pg.Pool(store.pool.options);
  pool.on('error', () => undefined);
  const second = postgresStore(pool);
  t.teardown(() => second.close());
  return second;
}
