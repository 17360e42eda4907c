// `parkbench admin box provision --out` (issue 12, item 10): a provision that
// cannot write its file changes nothing, so the box keeps the MQTT password it
// has; the new password is stored only once the file holding it is in place.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import Database from 'better-sqlite3';
import { verifyMqttPassword } from '../../api/mqtt/password-hash.js';
import { tempDir } from '../helpers/api-app.js';
import { runCli } from '../helpers/run-cli.js';

test('box provision --out into a missing folder: one line, exit 1, and the old MQTT password still works', async (t) => {
  const dir = tempDir(t, 'parkbench-provision-');
  const env = { DATABASE_PATH: join(dir, 'admin.sqlite'), SCRYPT_LOG2_N: '10', MQTT_URL: '' };
  const run = (...args: string[]) => runCli(['admin', ...args], { env });
  t.is(
    (
      await run(
        'parking',
        'create',
        '--name',
        'Lot',
        '--currency',
        'EUR',
        '--price-per-hour',
        '1',
        '--max-duration-minutes',
        '60',
      )
    ).code,
    0,
  );
  const added = await run(
    'box',
    'add',
    '--parking',
    '1',
    '--module-id',
    '9101',
    '--mac',
    '00:07:80:AA:BB:01',
    '--direction',
    'entrance',
    '--json',
  );
  const { mqtt_password: password } = JSON.parse(added.stdout) as { mqtt_password: string };
  const storedHash = (): string => {
    const db = new Database(env.DATABASE_PATH, { readonly: true });
    try {
      return (
        db.prepare('SELECT mqtt_password_hash FROM boxes WHERE module_id = 9101').get() as {
          mqtt_password_hash: string;
        }
      ).mqtt_password_hash;
    } finally {
      db.close();
    }
  };
  const before = storedHash();

  const failed = await run(
    'box',
    'provision',
    '--module-id',
    '9101',
    '--out',
    join(dir, 'no', 'such', 'dir', 'x.json'),
  );
  t.is(failed.code, 1);
  t.is(failed.stdout, '');
  t.regex(failed.stderr, /^[^\n]*no[/]such[/]dir[/]x\.json[^\n]*\n$/);
  t.is(storedHash(), before, 'the stored hash is unchanged');
  t.true(await verifyMqttPassword(password, storedHash()), 'the old password still logs in');

  // A file that cannot be replaced (a folder in its place) fails the same way, leaving no temporary file.
  const blocked = join(dir, 'blocked.json');
  (await import('node:fs')).mkdirSync(blocked);
  const refused = await run('box', 'provision', '--module-id', '9101', '--out', blocked);
  t.is(refused.code, 1);
  t.is(storedHash(), before);
  t.deepEqual(
    readdirSync(dir).filter((name) => name.endsWith('.tmp')),
    [],
  );

  // And a provision that works still issues a new password.
  const out = join(dir, 'box-9101.json');
  t.is((await run('box', 'provision', '--module-id', '9101', '--out', out)).code, 0);
  t.not(storedHash(), before);
  t.false(await verifyMqttPassword(password, storedHash()));
});
