// Migration 8 rebuilds secured_parkings (parking_key becomes nullable): a
// database of migration 7 with a parking, its box, a session and a smart key
// keeps every row and every reference, and its parking becomes sealed.
import { join } from 'node:path';
import test from 'ava';
import Database from 'better-sqlite3';
import { MIGRATIONS } from '../../../../api/db/migrations/index.js';
import { migrate } from '../../../../api/db/migrate-sqlite.js';
import { tempDir } from '../../../helpers/api-app.js';

const beforeAccessModes = MIGRATIONS.filter((migration) => migration.version < 8);

function openDatabase(path: string): Database.Database {
  const db = new Database(path);
  db.pragma('foreign_keys = ON');
  return db;
}

test('a parking of a version 1 database becomes sealed and keeps its key, its boxes and their references', (t) => {
  const db = openDatabase(join(tempDir(t), 'old.sqlite'));
  migrate(db, beforeAccessModes);
  db.exec(`
    INSERT INTO secured_parkings (id, name, currency, price_per_hour_minor, max_duration_minutes, tries, parking_key, forwarding_unverified, created_at)
      VALUES (7, 'Lot', 'EUR', 250, 120, 10, '000102030405060708090a0b0c0d0e0f', 1, 1);
    INSERT INTO boxes (module_id, parking_id, direction, mac_address, box_key, mqtt_username, mqtt_password_hash, created_at)
      VALUES (9101, 7, 'entrance', '00:07:80:AA:BB:01', '101112131415161718191a1b1c1d1e1f', 'box-9101', 'x', 1);
  `);

  migrate(db);

  const parking = db.prepare('SELECT * FROM secured_parkings WHERE id = 7').get() as Record<string, unknown>;
  t.like(parking, {
    access_mode: 'sealed',
    parking_key: '000102030405060708090a0b0c0d0e0f',
    issuer_public_key: null,
    forwarding_unverified: 1,
  });
  t.deepEqual(db.pragma('foreign_key_check'), []);
  t.is(db.pragma('foreign_keys', { simple: true }), 1, 'foreign keys are back on');
  // The box still refers to the rebuilt table: a box of a parking that does not exist is refused.
  t.throws(
    () =>
      db
        .prepare(
          "INSERT INTO boxes (module_id, parking_id, direction, mac_address, box_key, mqtt_username, mqtt_password_hash, created_at) VALUES (9102, 8, 'exit', '00:07:80:AA:BB:02', 'k', 'box-9102', 'x', 1)",
        )
        .run(),
    { any: true, code: 'SQLITE_CONSTRAINT_FOREIGNKEY' },
  );
});

test('the table refuses a sealed parking without a parking key and a signed one without its issuer pair', (t) => {
  const db = openDatabase(join(tempDir(t), 'new.sqlite'));
  migrate(db);
  const insert = db.prepare(
    "INSERT INTO secured_parkings (name, currency, price_per_hour_minor, max_duration_minutes, tries, access_mode, parking_key, issuer_private_key, issuer_public_key, created_at) VALUES ('Lot', 'EUR', 250, 120, 10, ?, ?, ?, ?, 1)",
  );
  t.throws(() => insert.run('sealed', null, null, null), { any: true, code: 'SQLITE_CONSTRAINT_CHECK' });
  t.throws(() => insert.run('signed', null, null, null), { any: true, code: 'SQLITE_CONSTRAINT_CHECK' });
  t.throws(() => insert.run('signed', null, 'aa', null), { any: true, code: 'SQLITE_CONSTRAINT_CHECK' });
  t.notThrows(() => insert.run('signed', null, 'aa'.repeat(32), 'bb'.repeat(64)));
  t.notThrows(() => insert.run('sealed', '00'.repeat(16), null, null));
});
