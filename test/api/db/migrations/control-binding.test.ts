// The migration that binds control answers rebuilds control_commands (sent_nonce, purpose `restore`) and
// adds box_holds: a database of the migration before it with a pending and a finished
// command keeps every row and column; the new purpose and column are taken.
import { join } from 'node:path';
import test from 'ava';
import Database from 'better-sqlite3';
import { MIGRATIONS } from '../../../../api/db/migrations/index.js';
import { migrate } from '../../../../api/db/migrate-sqlite.js';
import { tempDir } from '../../../helpers/api-app.js';

const BINDING = MIGRATIONS.find((migration) => migration.name.startsWith('control answers bound'))?.version ?? 0;

test('control commands of a database from before the binding keep every column; sent_nonce starts empty; restore and box_holds are taken', (t) => {
  t.true(BINDING > 17);
  const db = new Database(join(tempDir(t), 'old.sqlite'));
  db.pragma('foreign_keys = ON');
  migrate(
    db,
    MIGRATIONS.filter((migration) => migration.version < BINDING),
  );
  db.exec(`
    INSERT INTO secured_parkings (id, name, currency, price_per_hour_minor, max_duration_minutes, tries, access_mode, parking_key, created_at)
      VALUES (7, 'Lot', 'EUR', 250, 120, 10, 'sealed', '000102030405060708090a0b0c0d0e0f', 1);
    INSERT INTO boxes (module_id, parking_id, direction, mac_address, box_key, mqtt_username, mqtt_password_hash, created_at)
      VALUES (9101, 7, 'entrance', '00:07:80:AA:BB:01', '101112131415161718191a1b1c1d1e1f', 'box-9101', 'x', 1);
    INSERT INTO control_commands (id, module_id, kind, body, operation, purpose, parking_id, requested_by, state, attempts,
        replays, control_seq, in_flight_until, next_attempt_at, last_status, last_error, last_attempt_at, created_at, finished_at)
      VALUES (1, 9101, 'REVOKE', '{"entries":[]}', 'revoke:1', 'revoke', 7, 'op', 'done', 2, 1, 41, NULL, 5, 'OK', NULL, 4, 1, 6),
             (2, 9101, 'SET_ISSUER', '{}', 'rotate:1', 'rotate_install', 7, 'op', 'pending', 1, 0, 42, 9, 8, NULL, 'x', 7, 2, NULL);
  `);
  const before = db.prepare('SELECT * FROM control_commands ORDER BY id').all();

  migrate(db);

  const after = db.prepare('SELECT * FROM control_commands ORDER BY id').all() as Record<string, unknown>[];
  t.deepEqual(
    after.map(({ sent_nonce, ...rest }) => {
      t.is(sent_nonce, null);
      return rest;
    }),
    before,
  );
  db.exec(`
    INSERT INTO control_commands (module_id, kind, body, operation, purpose, parking_id, requested_by, next_attempt_at, created_at, sent_nonce)
      VALUES (9101, 'SET_ISSUER', '{}', 'conformance:1', 'restore', 7, 'run', 1, 1, '000102030405060708090a0b');
    INSERT INTO box_holds (module_id, holder, held_until, created_at) VALUES (9101, 'conformance run x', 10, 1);
  `);
  t.throws(() => db.exec("UPDATE control_commands SET purpose = 'other' WHERE id = 1"), {
    any: true,
    code: 'SQLITE_CONSTRAINT_CHECK',
  });
  t.deepEqual(db.pragma('foreign_key_check'), []);
  t.deepEqual(
    (
      db
        .prepare(
          "SELECT name FROM sqlite_master WHERE name IN ('control_commands_pending', 'control_commands_sequence') AND type = 'index' ORDER BY name",
        )
        .all() as { name: string }[]
    ).map((row) => row.name),
    ['control_commands_pending', 'control_commands_sequence'],
    'both indexes rebuilt',
  );
});
