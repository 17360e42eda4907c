// `parkbench admin box provision --out`: a provision that cannot write its
// file changes nothing, so the box keeps the MQTT password it has; the new
// password is stored only once the file holding it is in place. Only a
// regular file or a new name is written: a symbolic link (not followed), a
// folder, a device, a FIFO or a socket at the path is refused, exit 2.
import { execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync, type Stats } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import test from 'ava';
import Database from 'better-sqlite3';
import { verifyMqttPassword } from '../../api/auth/mqtt-password.js';
import { tempDir } from '../helpers/api-app.js';
import { runCli } from '../helpers/run-cli.js';

/** A database with parking 1 and box 9101, and a reader of the box's stored MQTT password hash. */
async function provisioned(t: ExecutionContext) {
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
  return { dir, env, run, password, storedHash };
}

test('box provision --out without a path writes data/box-<module_id>.json and fleet provision without --out data/fleet.json, under the working directory; nothing else lands there', async (t) => {
  const { dir, env, password, storedHash } = await provisioned(t);
  const cwd = join(dir, 'checkout');
  mkdirSync(cwd);
  const run = (...args: string[]) => runCli(['admin', ...args], { env, cwd });
  const box = await run('box', 'provision', '--module-id', '9101', '--out', '--json');
  t.is(box.code, 0, box.stderr);
  t.deepEqual(JSON.parse(box.stdout), { module_id: 9101, out: join('data', 'box-9101.json') });
  const file = JSON.parse(readFileSync(join(cwd, 'data', 'box-9101.json'), 'utf8')) as { mqtt: { password: string } };
  t.true(await verifyMqttPassword(file.mqtt.password, storedHash()));
  t.false(await verifyMqttPassword(password, storedHash()));
  t.is(lstatSync(join(cwd, 'data', 'box-9101.json')).mode & 0o777, 0o600);

  const fleet = await run('fleet', 'provision', '--parking', '1', '--count', '2', '--json');
  t.is(fleet.code, 0, fleet.stderr);
  t.like(JSON.parse(fleet.stdout), { count: 2, out: join('data', 'fleet.json') });
  t.is((JSON.parse(readFileSync(join(cwd, 'data', 'fleet.json'), 'utf8')) as unknown[]).length, 2);
  t.deepEqual(readdirSync(cwd), ['data']);
  t.deepEqual(readdirSync(join(cwd, 'data')).sort(), ['box-9101.json', 'fleet.json']);
});

test('box provision --out into a missing folder: one line, exit 1, and the old MQTT password still works', async (t) => {
  const { dir, run, password, storedHash } = await provisioned(t);
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

  // A provision that works still issues a new password, and one over that regular file too.
  const out = join(dir, 'box-9101.json');
  t.is((await run('box', 'provision', '--module-id', '9101', '--out', out)).code, 0);
  t.not(storedHash(), before);
  t.false(await verifyMqttPassword(password, storedHash()));
  const first = readFileSync(out, 'utf8');
  t.is((await run('box', 'provision', '--module-id', '9101', '--out', out)).code, 0);
  t.not(readFileSync(out, 'utf8'), first, 'the regular file is replaced');
  t.is(lstatSync(out).mode & 0o777, 0o600);
});

test('box provision --out refuses a symbolic link (not followed), a folder, a device, a FIFO and a socket: one line naming the path and why, exit 2, nothing changed', async (t) => {
  const { dir, run, password, storedHash } = await provisioned(t);
  const before = storedHash();

  const victim = join(dir, 'victim.txt');
  writeFileSync(victim, 'keep me');
  const link = join(dir, 'link.json');
  symlinkSync(victim, link);
  const dangling = join(dir, 'dangling.json');
  symlinkSync(join(dir, 'nowhere.json'), dangling);
  const folder = join(dir, 'folder.json');
  mkdirSync(folder);
  const fifo = join(dir, 'fifo.json');
  execFileSync('mkfifo', [fifo]);
  const socket = join(dir, 'socket.json');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  // A device node like /dev/full: made beside the others as root (mknod), else /dev/full itself (not writable then).
  const device = process.getuid?.() === 0 ? join(dir, 'full.json') : '/dev/full';
  if (device !== '/dev/full') execFileSync('mknod', [device, 'c', '1', '7']);

  const cases: [string, string, (stats: Stats) => boolean][] = [
    [link, 'a symbolic link', (stats) => stats.isSymbolicLink()],
    [dangling, 'a symbolic link', (stats) => stats.isSymbolicLink()],
    [folder, 'a directory', (stats) => stats.isDirectory()],
    [device, 'a character device', (stats) => stats.isCharacterDevice()],
    [fifo, 'a FIFO', (stats) => stats.isFIFO()],
    [socket, 'a socket', (stats) => stats.isSocket()],
  ];
  for (const [path, what, still] of cases) {
    const refused = await run('box', 'provision', '--module-id', '9101', '--out', path);
    t.is(refused.code, 2, path);
    t.is(refused.stdout, '', path);
    t.is(
      refused.stderr,
      `parkbench: ${path} is ${what}: refused, only a regular file or a new name is written\n`,
      path,
    );
    t.true(still(lstatSync(path)), `${path} is still ${what}`);
  }
  t.is(readFileSync(victim, 'utf8'), 'keep me', 'the link was not followed');
  t.false(readdirSync(dir).includes('nowhere.json'), 'the dangling link was not followed');
  t.is(storedHash(), before, 'the stored hash is unchanged');
  t.true(await verifyMqttPassword(password, storedHash()), 'the old password still logs in');
  t.deepEqual(
    readdirSync(dir).filter((name) => name.endsWith('.tmp')),
    [],
  );
});

test('fleet provision --out to a symbolic link is refused before any box is added (exit 2)', async (t) => {
  const { dir, run } = await provisioned(t);
  const victim = join(dir, 'victim.txt');
  writeFileSync(victim, 'keep me');
  const link = join(dir, 'fleet.json');
  symlinkSync(victim, link);
  const refused = await run('fleet', 'provision', '--parking', '1', '--count', '2', '--out', link);
  t.is(refused.code, 2);
  t.is(
    refused.stderr,
    `parkbench: ${link} is a symbolic link: refused, only a regular file or a new name is written\n`,
  );
  t.is(readFileSync(victim, 'utf8'), 'keep me');
  const shown = await run('parking', 'show', '--id', '1', '--json');
  t.is((JSON.parse(shown.stdout) as { boxes: unknown[] }).boxes.length, 1, 'no box added');
});
