// The migration that marks boxes simulated or real, on both engines: a
// database of the migration before it with the demo's two boxes, a box an
// operator added to the demo parking, a fleet's box and an operator's box of
// another parking. The boxes parkbench made (the demo's in the demo parking,
// the fleet's) become simulated, every other one real; a new box is real
// unless it says otherwise.
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import Database from 'better-sqlite3';
import pg from 'pg';
import { parsePostgresUrl } from '../../../../api/config/index.js';
import { MIGRATIONS } from '../../../../api/db/migrations/index.js';
import { migrate } from '../../../../api/db/migrate-sqlite.js';
import { POSTGRES_MIGRATIONS, migratePostgres } from '../../../../api/db/migrate-postgres.js';
import { createPostgresPool } from '../../../../api/db/postgres-pool.js';
import { tempDir } from '../../../helpers/api-app.js';
import { postgresForFile } from '../../../helpers/postgres.js';
import { testNeeding } from '../../../helpers/requires.js';

const SIMULATED = MIGRATIONS.find((migration) => migration.name === 'boxes marked simulated or real')?.version ?? 0;

const OLD_ROWS = `
  INSERT INTO client_apps (id, name, client_app_id, client_secret_hash, created_at) VALUES (1, 'Demo app', 'app', 'h', 1);
  INSERT INTO users (id, email, password_hash, first_name, last_name, phone, created_at)
    VALUES (1, 'demo.driver@parkbench.test', 'h', 'Demo', 'Driver', '+10000000000', 1);
  INSERT INTO secured_parkings (id, name, currency, price_per_hour_minor, max_duration_minutes, tries, access_mode, parking_key, created_at)
    VALUES (1, 'Demo parking', 'EUR', 250, 120, 10, 'sealed', '000102030405060708090a0b0c0d0e0f', 1),
           (2, 'Lot', 'EUR', 250, 120, 10, 'sealed', '000102030405060708090a0b0c0d0e0f', 1);
  INSERT INTO demo (id, client_app_row_id, client_secret, user_id, driver_password, parking_id) VALUES (1, 1, 's', 1, 'p', 1);
  INSERT INTO boxes (module_id, parking_id, direction, mac_address, box_key, mqtt_username, mqtt_password_hash, created_at)
    VALUES (9101, 1, 'entrance', '02:50:42:00:23:8D', '101112131415161718191a1b1c1d1e1f', 'box-9101', 'x', 1),
           (9102, 1, 'exit', '02:50:42:00:23:8E', '101112131415161718191a1b1c1d1e1f', 'box-9102', 'x', 1),
           (4242, 1, 'entrance', '00:07:80:AA:BB:01', '101112131415161718191a1b1c1d1e1f', 'box-4242', 'x', 1),
           (100000, 2, 'entrance', '02:46:00:01:86:A0', '101112131415161718191a1b1c1d1e1f', 'box-100000', 'x', 1),
           (5000, 2, 'exit', '02:50:42:00:13:88', '101112131415161718191a1b1c1d1e1f', 'box-5000', 'x', 1);
`;

const EXPECTED = [
  { module_id: 4242, simulated: 0 },
  { module_id: 5000, simulated: 0 },
  { module_id: 9101, simulated: 1 },
  { module_id: 9102, simulated: 1 },
  { module_id: 100000, simulated: 1 },
];

const NEW_BOX = `INSERT INTO boxes (module_id, parking_id, direction, mac_address, box_key, mqtt_username, mqtt_password_hash, created_at)
  VALUES (4243, 1, 'exit', '00:07:80:AA:BB:02', '101112131415161718191a1b1c1d1e1f', 'box-4243', 'x', 1)`;

const SELECT = 'SELECT module_id, simulated FROM boxes ORDER BY module_id';

test("SQLite: the demo's and a fleet's boxes become simulated, the operators' real; a new box is real", (t) => {
  t.true(SIMULATED > 18);
  const db = new Database(join(tempDir(t), 'old.sqlite'));
  t.teardown(() => db.close());
  migrate(
    db,
    MIGRATIONS.filter((migration) => migration.version < SIMULATED),
  );
  db.exec(OLD_ROWS);
  migrate(db);
  t.deepEqual(db.prepare(SELECT).all(), EXPECTED);
  db.exec(NEW_BOX);
  t.is(db.prepare('SELECT simulated FROM boxes WHERE module_id = 4243').pluck().get(), 0);
});

const withPostgres = testNeeding('postgres', test);
const server = postgresForFile(test);

async function freshPool(t: ExecutionContext): Promise<pg.Pool> {
  const name = `simulated_${process.pid}`;
  const admin = new pg.Client({ connectionString: server().url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(server().url);
  url.pathname = `/${name}`;
  const pool = createPostgresPool(parsePostgresUrl(url.toString()), {
    max: 1,
    onIdleError: (error) => t.log(error.message),
  });
  t.teardown(() => pool.end());
  return pool;
}

withPostgres(
  "PostgreSQL: the demo's and a fleet's boxes become simulated, the operators' real; a new box is real",
  async (t) => {
    const pool = await freshPool(t);
    await migratePostgres(pool, {
      ...POSTGRES_MIGRATIONS,
      later: POSTGRES_MIGRATIONS.later.filter((migration) => migration.version < SIMULATED),
    });
    await pool.query(OLD_ROWS);
    t.is(
      await migratePostgres(pool),
      POSTGRES_MIGRATIONS.later.filter((migration) => migration.version >= SIMULATED).length,
      'this migration and those after it',
    );
    t.deepEqual((await pool.query(SELECT)).rows, EXPECTED);
    await pool.query(NEW_BOX);
    t.deepEqual((await pool.query('SELECT simulated FROM boxes WHERE module_id = 4243')).rows, [{ simulated: 0 }]);
  },
);
