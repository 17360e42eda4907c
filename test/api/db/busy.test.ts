// isDatabaseBusy (api/db/busy.ts) on the errors each engine really raises
// when it is busy, and not on an ordinary error of the same engine. SQLite's
// side through the API is test/api/http/database-busy.test.ts; here the engines'
// own errors: SQLITE_BUSY from a second connection to one file, and
// PostgreSQL's lock timeout (55P03), serialization failure (40001) and
// deadlock (40P01) from two real transactions.
import test from 'ava';
import { sql } from 'kysely';
import pg from 'pg';
import { isDatabaseBusy } from '../../../api/db/busy.js';
import { storeTests } from '../../helpers/stores.js';
import type { Store } from '../../../api/db/store.js';

const storeTest = storeTests(test);

async function caught(work: () => Promise<unknown>): Promise<unknown> {
  try {
    await work();
  } catch (error) {
    return error;
  }
  throw new Error('it did not fail');
}

/** A second connection to the store's database, outside its pool or connection. */
async function secondConnection(
  store: Store,
): Promise<{ query(text: string): Promise<unknown>; close(): Promise<void> }> {
  if (store.dialect === 'sqlite') {
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(store.sqlite.name);
    db.pragma('busy_timeout = 0');
    return {
      query: (text) => Promise.resolve(db.exec(text)),
      close: () => {
        db.close();
        return Promise.resolve();
      },
    };
  }
  const client = new pg.Client(store.pool.options);
  await client.connect();
  return { query: (text) => client.query(text), close: () => client.end() };
}

storeTest(
  'a write that meets another connection holding the lock is busy; a constraint violation is not',
  async (t, store) => {
    await store.kysely
      .insertInto('client_apps')
      .values({ id: 1, name: 'a', client_app_id: 'a', client_secret_hash: 'h', created_at: 1 })
      .execute();
    const other = await secondConnection(store);
    t.teardown(() => other.close());
    const duplicate = await caught(() =>
      store.kysely
        .insertInto('client_apps')
        .values({ name: 'b', client_app_id: 'a', client_secret_hash: 'h', created_at: 1 })
        .execute(),
    );
    t.false(isDatabaseBusy(duplicate), String(duplicate));

    // The store holds a row's write lock in an open transaction; the other connection waits for it at most 50 ms.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked: () => void = () => undefined;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const holder = store.kysely.transaction().execute(async (trx) => {
      await trx.updateTable('client_apps').set({ name: 'held' }).where('id', '=', 1).execute();
      locked();
      await held;
    });
    await lockTaken;
    const busy = await caught(() =>
      other.query(
        store.dialect === 'postgres'
          ? "SET lock_timeout = '50ms'; UPDATE client_apps SET name = 'other' WHERE id = 1"
          : "UPDATE client_apps SET name = 'other' WHERE id = 1",
      ),
    );
    release();
    await holder;
    t.true(isDatabaseBusy(busy), String(busy));
    t.is((busy as { code: string }).code, store.dialect === 'postgres' ? '55P03' : 'SQLITE_BUSY');
  },
);

storeTest.on(
  'postgres',
  'the loser of a serialization conflict and of a deadlock is busy (PostgreSQL only: SQLite has one writer at a time, neither can happen)',
  async (t, store) => {
    if (store.dialect !== 'postgres') throw new Error('declared for PostgreSQL only');
    await sql`INSERT INTO client_apps (id, name, client_app_id, client_secret_hash, created_at) VALUES (1, 'a', 'a', 'h', 1), (2, 'b', 'b', 'h', 1)`.execute(
      store.kysely,
    );
    const one = new pg.Client(store.pool.options);
    const two = new pg.Client(store.pool.options);
    await one.connect();
    await two.connect();
    t.teardown(async () => {
      await one.end();
      await two.end();
    });

    // Serializable: both read, both write what the other read.
    await one.query('BEGIN ISOLATION LEVEL SERIALIZABLE');
    await two.query('BEGIN ISOLATION LEVEL SERIALIZABLE');
    await one.query('SELECT sum(created_at) FROM client_apps');
    await two.query('SELECT sum(created_at) FROM client_apps');
    await one.query('UPDATE client_apps SET created_at = 2 WHERE id = 1');
    await two.query('UPDATE client_apps SET created_at = 3 WHERE id = 2');
    await one.query('COMMIT');
    const serialization = await caught(() => two.query('COMMIT'));
    t.is((serialization as { code: string }).code, '40001');
    t.true(isDatabaseBusy(serialization));

    // Deadlock: each holds one row and asks for the other's.
    await one.query('BEGIN');
    await two.query('BEGIN');
    await one.query('UPDATE client_apps SET name = $1 WHERE id = 1', ['x']);
    await two.query('UPDATE client_apps SET name = $1 WHERE id = 2', ['y']);
    const first = one.query('UPDATE client_apps SET name = $1 WHERE id = 2', ['x']).then(
      () => undefined,
      (error: unknown) => error,
    );
    const second = two.query('UPDATE client_apps SET name = $1 WHERE id = 1', ['y']).then(
      () => undefined,
      (error: unknown) => error,
    );
    const errors = (await Promise.all([first, second])).filter((error) => error !== undefined);
    await one.query('ROLLBACK');
    await two.query('ROLLBACK');
    t.is(errors.length, 1, 'one of the two is chosen as the loser');
    t.is((errors[0] as { code: string }).code, '40P01');
    t.true(isDatabaseBusy(errors[0]));
  },
);

storeTest.on(
  'postgres',
  'a connection the server ended (a restart, a failover) is busy: the transaction did not commit (PostgreSQL only: SQLite has no server)',
  async (t, store) => {
    if (store.dialect !== 'postgres') throw new Error('declared for PostgreSQL only');
    const victim = new pg.Client(store.pool.options);
    await victim.connect();
    // pg reports the end as an error event too, after the query's rejection.
    victim.on('error', () => undefined);
    const { rows } = await victim.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    await victim.query('BEGIN');
    await victim.query(
      "INSERT INTO client_apps (name, client_app_id, client_secret_hash, created_at) VALUES ('a', 'a', 'h', 1)",
    );
    const ended = victim.query('SELECT pg_sleep(30)').then(
      () => undefined,
      (error: unknown) => error,
    );
    await store.kysely.executeQuery(sql`SELECT pg_terminate_backend(${rows[0]?.pid})`.compile(store.kysely));
    const error = await ended;
    t.is((error as { code?: string }).code, '57P01', String(error));
    t.true(isDatabaseBusy(error));
    const apps = await store.kysely.selectFrom('client_apps').select('id').execute();
    t.deepEqual(apps, [], 'nothing of its transaction was written');
    await victim.end().catch(() => undefined);
  },
);
