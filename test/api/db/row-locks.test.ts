// How a service asks the store for a row lock (api/db/row-locks.ts): on
// PostgreSQL the query reads its rows locked, FOR NO KEY UPDATE unless the
// caller asks FOR UPDATE (with OF and SKIP LOCKED, as the outbox's grouping
// does), and the lock holds until the transaction ends; on SQLite the query
// is left as it is, and a lock alone runs nothing (BEGIN IMMEDIATE holds the
// file already).
import test from 'ava';
import { sql } from 'kysely';
import { storeTests } from '../../helpers/stores.js';

const storeTest = storeTests(test);

storeTest('lockForUpdate: the lock clause the caller asked for on PostgreSQL, none on SQLite', (t, store) => {
  const query = store.kysely.selectFrom('parking_sessions').select('id').where('id', '=', 1);
  const outbox = store.kysely.selectFrom('forwarding_outbox as o').select('o.id');
  const plain = query.compile().sql;
  const lockedSql = store.lockForUpdate(query).compile().sql;
  const outboxSql = store.lockForUpdate(outbox, { strength: 'update', of: 'o', skipLocked: true }).compile().sql;
  if (store.dialect === 'sqlite') {
    t.is(lockedSql, plain);
    t.is(outboxSql, outbox.compile().sql);
  } else {
    t.is(lockedSql, `${plain} for no key update`);
    t.is(outboxSql, `${outbox.compile().sql} for update of "o" skip locked`);
  }
});

storeTest(
  'takeRowLocks: the rows stay locked until the transaction ends (PostgreSQL); SQLite runs nothing',
  async (t, store) => {
    const app = await store.kysely
      .insertInto('client_apps')
      .values({ name: 'locked', client_app_id: 'id-locked', client_secret_hash: 'hash', created_at: 1_700_000_000_000 })
      .returning('id')
      .executeTakeFirstOrThrow();
    if (store.dialect === 'sqlite') {
      // A query SQLite would refuse: not run.
      await t.notThrowsAsync(() =>
        store.takeRowLocks(store.kysely.selectFrom('client_apps').select(sql<number>`no_such_column`.as('x'))),
      );
      return;
    }
    await store.kysely.transaction().execute(async (trx) => {
      await store.takeRowLocks(trx.selectFrom('client_apps').select('id').where('id', '=', app.id));
      // Another connection of the pool: FOR UPDATE conflicts with the FOR NO KEY UPDATE held.
      const error = await t.throwsAsync(() =>
        store.kysely.selectFrom('client_apps').select('id').where('id', '=', app.id).forUpdate().noWait().execute(),
      );
      t.is((error as { code?: string } | undefined)?.code, '55P03', 'lock_not_available');
    });
    const after = await store.kysely
      .selectFrom('client_apps')
      .select('id')
      .where('id', '=', app.id)
      .forUpdate()
      .noWait()
      .execute();
    t.deepEqual(after, [{ id: app.id }], 'released at the COMMIT');
  },
);
