// Migrations on PostgreSQL (api/db/migrate-postgres.ts) on the test
// server: the baseline on an empty database, then the later ones, all once
// even when two pools (two processes' worth of connections) migrate one
// database at the same moment; another program's database and a newer
// parkbench's are refused, as on SQLite.
import test, { type ExecutionContext } from 'ava';
import pg from 'pg';
import { parsePostgresUrl } from '../../../../api/config/index.js';
import { MIGRATIONS } from '../../../../api/db/migrations/index.js';
import {
  POSTGRES_MIGRATIONS,
  migratePostgres,
  type PostgresMigrationPlan,
} from '../../../../api/db/migrate-postgres.js';
import { createPostgresPool } from '../../../../api/db/postgres-pool.js';
import { DatabaseRefusedError } from '../../../../api/db/refused.js';
import { postgresForFile } from '../../../helpers/postgres.js';
import { testNeeding } from '../../../helpers/requires.js';

const withPostgres = testNeeding('postgres', test);
const server = postgresForFile(test);
let made = 0;

/** A fresh database on the test server; returns a function making pools on it. */
async function freshDatabase(t: ExecutionContext): Promise<() => pg.Pool> {
  const name = `migrate_${process.pid}_${(made += 1)}`;
  const admin = new pg.Client({ connectionString: server().url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(server().url);
  url.pathname = `/${name}`;
  return () => {
    const pool = createPostgresPool(parsePostgresUrl(url.toString()), {
      max: 2,
      onIdleError: (error) => t.log(error.message),
    });
    t.teardown(() => pool.end());
    return pool;
  };
}

async function versions(pool: pg.Pool): Promise<number[]> {
  return (await pool.query<{ version: number }>('SELECT version FROM migrations ORDER BY version')).rows.map(
    (row) => row.version,
  );
}

const withLater: PostgresMigrationPlan = {
  ...POSTGRES_MIGRATIONS,
  later: [
    ...POSTGRES_MIGRATIONS.later,
    { version: 99, name: 'a later one', sql: 'ALTER TABLE boxes ADD COLUMN note text' },
  ],
};

withPostgres(
  'an empty database gets the baseline as every version up to it, then the later ones; again, nothing',
  async (t) => {
    const pool = (await freshDatabase(t))();
    t.is(await migratePostgres(pool), MIGRATIONS.length);
    t.deepEqual(
      await versions(pool),
      MIGRATIONS.map((migration) => migration.version),
    );
    t.is(await migratePostgres(pool), 0);
    t.is(await migratePostgres(pool, withLater), 1);
    t.is(await migratePostgres(pool, withLater), 0);
    await pool.query("UPDATE boxes SET note = 'column exists'");
    t.pass();
  },
);

withPostgres('two pools migrating one empty database at once, 10 times: applied once, both succeed', async (t) => {
  for (let round = 0; round < 10; round++) {
    const pools = await freshDatabase(t);
    const [one, two] = [pools(), pools()];
    // Both connected first, so the two migrations start together.
    await Promise.all([one.query('SELECT 1'), two.query('SELECT 1')]);
    const counts = await Promise.all([migratePostgres(one, withLater), migratePostgres(two, withLater)]);
    t.is(counts[0] + counts[1], MIGRATIONS.length + 1, `round ${round}: ${counts.join(' + ')}`);
    t.deepEqual(await versions(one), [...MIGRATIONS.map((migration) => migration.version), 99]);
  }
});

withPostgres("another program's database and a newer parkbench's are refused, nothing written", async (t) => {
  const pools = await freshDatabase(t);
  const other = pools();
  await other.query('CREATE TABLE invoices (id integer)');
  await t.throwsAsync(migratePostgres(other), {
    instanceOf: DatabaseRefusedError,
    message: /not a parkbench database \(tables invoices/,
  });
  t.is((await other.query<{ found: string | null }>("SELECT to_regclass('migrations') AS found")).rows[0]?.found, null);

  const newer = (await freshDatabase(t))();
  await migratePostgres(newer, withLater);
  await t.throwsAsync(migratePostgres(newer), {
    instanceOf: DatabaseRefusedError,
    message: /at migration 99, which this parkbench does not know/,
  });
});
