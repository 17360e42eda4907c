// The store's own helpers on both engines (api/db/store.ts): a query
// compiled once binds its values in the order it was built with, the
// two-argument greatest, the count of changed rows, a rolled back
// transaction leaves nothing, and the int8 columns come back as numbers.
import test from 'ava';
import { sql } from 'kysely';
import { CompiledOnce, changed, greatest } from '../../../api/db/store.js';
import { storeTests } from '../../helpers/stores.js';

const storeTest = storeTests(test);

async function addClientApp(store: Parameters<Parameters<typeof storeTest>[1]>[1], name: string): Promise<number> {
  const row = await store.kysely
    .insertInto('client_apps')
    .values({ name, client_app_id: `id-${name}`, client_secret_hash: 'hash', created_at: 1_700_000_000_000 })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

storeTest(
  'a query compiled once runs with each new set of values, bound in the order it was built',
  async (t, store) => {
    const first = await addClientApp(store, 'first');
    const second = await addClientApp(store, 'second');
    const byIdAndName = new CompiledOnce(
      store.kysely
        .selectFrom('client_apps')
        .select(['id', 'name', 'created_at'])
        .where('id', '=', 0)
        .where('name', '=', ''),
    );
    t.deepEqual(await byIdAndName.run(store.kysely, [first, 'first']), [
      { id: first, name: 'first', created_at: 1_700_000_000_000 },
    ]);
    t.deepEqual(await byIdAndName.run(store.kysely, [second, 'second']), [
      { id: second, name: 'second', created_at: 1_700_000_000_000 },
    ]);
    t.deepEqual(await byIdAndName.run(store.kysely, [second, 'first']), []);
    const error = await t.throwsAsync(() => byIdAndName.run(store.kysely, [first]));
    t.regex(error.message, /1 values for 2 parameters/);
  },
);

storeTest('greatest: the larger of two values, NULL-free, on both engines', async (t, store) => {
  const id = await addClientApp(store, 'a');
  const row = await store.kysely
    .selectFrom('client_apps')
    .select(greatest<number>(store.dialect, sql`created_at`, sql`${1_800_000_000_000}`).as('larger'))
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  t.is(row.larger, 1_800_000_000_000);
});

storeTest('changed counts the rows an update or a delete touched', async (t, store) => {
  await addClientApp(store, 'a');
  await addClientApp(store, 'b');
  t.is(changed(await store.kysely.updateTable('client_apps').set({ name: 'c' }).executeTakeFirst()), 2);
  t.is(changed(await store.kysely.deleteFrom('client_apps').where('name', '=', 'nobody').executeTakeFirst()), 0);
  t.is(changed(await store.kysely.deleteFrom('client_apps').executeTakeFirst()), 2);
});

storeTest('a transaction that throws leaves nothing behind; ids and times come back as numbers', async (t, store) => {
  await t.throwsAsync(
    store.kysely.transaction().execute(async (trx) => {
      await trx
        .insertInto('client_apps')
        .values({ name: 'lost', client_app_id: 'lost', client_secret_hash: 'h', created_at: 1 })
        .execute();
      throw new Error('rolled back');
    }),
    { message: 'rolled back' },
  );
  t.deepEqual(await store.kysely.selectFrom('client_apps').selectAll().execute(), []);
  const id = await addClientApp(store, 'kept');
  const row = await store.kysely.selectFrom('client_apps').select(['id', 'created_at']).executeTakeFirstOrThrow();
  t.is(typeof row.id, 'number');
  t.deepEqual(row, { id, created_at: 1_700_000_000_000 });
});
