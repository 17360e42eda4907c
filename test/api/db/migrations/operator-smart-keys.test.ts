// Migration 13 rebuilds smart_keys (user_id becomes nullable, purpose gains
// `operator`, operator_id names the operator): a database of migration 12
// with a driver's key, a box log and a control command of it keeps every row
// and every reference; an operator key needs no driver and names no session.
import { join } from 'node:path';
import test from 'ava';
import Database from 'better-sqlite3';
import { MIGRATIONS } from '../../../../api/db/migrations/index.js';
import { migrate } from '../../../../api/db/migrate-sqlite.js';
import { tempDir } from '../../../helpers/api-app.js';

const OPERATOR_KEYS = MIGRATIONS.find((migration) => migration.name.startsWith('operator smart keys'))?.version ?? 0;

function openDatabase(path: string): Database.Database {
  const db = new Database(path);
  db.pragma('foreign_keys = ON');
  return db;
}

function seed(db: Database.Database): void {
  db.exec(`
    INSERT INTO users (id, email, password_hash, first_name, last_name, phone, created_at)
      VALUES (3, 'ada@example.com', 'x', 'Ada', 'Lovelace', '+44', 1);
    INSERT INTO secured_parkings (id, name, currency, price_per_hour_minor, max_duration_minutes, tries, access_mode, parking_key, created_at)
      VALUES (7, 'Lot', 'EUR', 250, 120, 10, 'sealed', '000102030405060708090a0b0c0d0e0f', 1);
    INSERT INTO boxes (module_id, parking_id, direction, mac_address, box_key, mqtt_username, mqtt_password_hash, created_at)
      VALUES (9101, 7, 'entrance', '00:07:80:AA:BB:01', '101112131415161718191a1b1c1d1e1f', 'box-9101', 'x', 1);
    INSERT INTO parking_sessions (id, user_id, parking_id, state, start_time, end_time, entrance_remaining_tries, exit_remaining_tries, amount_minor, currency, created_at)
      VALUES (5, 3, 7, 'active', 1, 2, 10, 10, 500, 'EUR', 1);
    INSERT INTO smart_keys (id, user_id, parking_id, session_id, type, description, purpose, access_command, module_ids, start_time, end_time, created_at, signed_by, revoked_at)
      VALUES (11, 3, 7, 5, 'session_access', 'Parking session 5', 'session', x'0102', '[9101]', 1, 2, 1, NULL, 9);
    INSERT INTO box_logs (id, source, fo_user_id, smart_key_id, equipment_id, secured_parking_id, type, offline, created_at, verified, received_at)
      VALUES (1, 'http', 3, 11, 9101, 7, 'in', 0, '2026-11-23T10:00:00.000Z', 0, 1);
    INSERT INTO operators (id, name, token_hash, created_at) VALUES (2, 'bench', x'00', 1);
  `);
}

test("a driver's key of a migration 12 database keeps every column and reference; an operator key needs no driver", (t) => {
  t.true(OPERATOR_KEYS > 12);
  const db = openDatabase(join(tempDir(t), 'old.sqlite'));
  migrate(
    db,
    MIGRATIONS.filter((migration) => migration.version < OPERATOR_KEYS),
  );
  seed(db);

  migrate(db);

  t.like(db.prepare('SELECT * FROM smart_keys WHERE id = 11').get(), {
    user_id: 3,
    session_id: 5,
    operator_id: null,
    purpose: 'session',
    description: 'Parking session 5',
    module_ids: '[9101]',
    revoked_at: 9,
  });
  t.deepEqual(db.pragma('foreign_key_check'), []);
  t.is(db.pragma('foreign_keys', { simple: true }), 1, 'foreign keys are back on');
  // The box log still refers to the rebuilt table.
  t.throws(
    () =>
      db
        .prepare(
          "INSERT INTO box_logs (source, smart_key_id, equipment_id, secured_parking_id, type, offline, created_at, verified, received_at) VALUES ('http', 99, 9101, 7, 'in', 0, 'x', 0, 1)",
        )
        .run(),
    { any: true, code: 'SQLITE_CONSTRAINT_FOREIGNKEY' },
  );

  const insert = db.prepare(
    "INSERT INTO smart_keys (user_id, parking_id, session_id, operator_id, type, purpose, access_command, module_ids, start_time, end_time, created_at) VALUES (?, 7, ?, ?, 'operator_access', ?, x'', '[9101]', 1, 2, 1)",
  );
  const operatorKey = Number(insert.run(null, null, 2, 'operator').lastInsertRowid);
  t.throws(() => insert.run(null, null, 2, 'session'), { any: true, code: 'SQLITE_CONSTRAINT_CHECK' });
  t.throws(() => insert.run(3, null, 2, 'operator'), { any: true, code: 'SQLITE_CONSTRAINT_CHECK' });
  t.throws(() => insert.run(null, 5, 2, 'operator'), { any: true, code: 'SQLITE_CONSTRAINT_CHECK' });
  // Removing the operator keeps the key (and its box logs), naming no operator any more.
  db.prepare('DELETE FROM operators WHERE id = 2').run();
  t.like(db.prepare('SELECT operator_id, purpose FROM smart_keys WHERE id = ?').get(operatorKey), {
    operator_id: null,
    purpose: 'operator',
  });
});
