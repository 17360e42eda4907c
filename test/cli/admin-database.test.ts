// Which database the CLI and the API agree to open, through
// the real entry point: read-only commands never create or migrate one, and
// work on a database they may only read; nothing adds parkbench's tables to
// another program's SQLite file; a database from a newer parkbench stops
// everything with one line naming both migration versions.
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import Database from 'better-sqlite3';
import { MIGRATIONS } from '../../api/db/migrations/index.js';
import { migrate } from '../../api/db/migrate-sqlite.js';
import { tempDir } from '../helpers/api-app.js';
import { startCli } from '../helpers/cli-process.js';
import { builtBin, runCli, type CliResult } from '../helpers/run-cli.js';

const LATEST = Math.max(...MIGRATIONS.map((migration) => migration.version));
const env = { SCRYPT_LOG2_N: '10', MQTT_URL: '' };
const admin = (database: string, ...args: string[]) => runCli(['admin', ...args, '--database', database], { env });

/** The commands that only read, each with what it needs besides --database. */
const readOnlyCommands = (dir: string): string[][] => [
  ['forwarding', 'status'],
  ['box', 'status'],
  ['mqtt-acl', '--format', 'mosquitto', '--out', join(dir, 'acl')],
];

function oneLineError(t: ExecutionContext, result: CliResult, code: number, pattern: RegExp): void {
  t.is(result.code, code, result.stderr);
  t.is(result.stdout, '');
  t.regex(result.stderr, /^parkbench: [^\n]+\n$/);
  t.regex(result.stderr, pattern);
}

function tablesOf(path: string): string[] {
  const db = new Database(path, { readonly: true });
  try {
    return (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]
    ).map((row) => row.name);
  } finally {
    db.close();
  }
}

test('a read-only command on a mistyped path: one line, exit 2, and no database or folder made', async (t) => {
  const dir = tempDir(t, 'parkbench-db-');
  const typo = join(dir, 'dtaa', 'parkbench.sqlite');
  for (const command of readOnlyCommands(dir)) {
    const result = await admin(typo, ...command);
    oneLineError(t, result, 2, /no database at .*dtaa[/]parkbench\.sqlite/);
  }
  t.deepEqual(readdirSync(dir), []);
  // A command that writes may create it.
  t.is((await admin(typo, 'client-app', 'create', '--name', 'x')).code, 0);
  t.true(existsSync(typo));
});

test("another program's SQLite file gets no parkbench tables: one line, exit 2, from admin and from the API", async (t) => {
  const dir = tempDir(t, 'parkbench-db-');
  const foreign = join(dir, 'shop.sqlite');
  const shop = new Database(foreign);
  shop.exec("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers (name) VALUES ('Ada')");
  shop.close();
  oneLineError(
    t,
    await admin(foreign, 'client-app', 'create', '--name', 'x'),
    2,
    /shop\.sqlite.*not a parkbench database.*customers/,
  );
  oneLineError(t, await admin(foreign, 'forwarding', 'status'), 2, /not a parkbench database/);
  const api = startCli(t, ['api'], { ...env, DATABASE_PATH: foreign, PORT: '0', MQTT_PORT: '0', LOG_LEVEL: 'fatal' });
  t.is(await api.exited, 2);
  t.deepEqual(api.stderr, [api.stderr.find((line) => /not a parkbench database/.test(line))]);
  t.deepEqual(tablesOf(foreign), ['customers']);
  const check = new Database(foreign, { readonly: true });
  t.is(check.pragma('journal_mode', { simple: true }), 'delete', 'not even switched to WAL');
  check.close();

  // An empty file is fine to start in.
  const empty = join(dir, 'empty.sqlite');
  writeFileSync(empty, '');
  t.is((await admin(empty, 'client-app', 'create', '--name', 'x')).code, 0);
  t.true(tablesOf(empty).includes('migrations'));
});

test('a database from a newer parkbench stops every command and the API, naming both versions, and is left alone', async (t) => {
  const dir = tempDir(t, 'parkbench-db-');
  const path = join(dir, 'parkbench.sqlite');
  t.is((await admin(path, 'client-app', 'create', '--name', 'x')).code, 0);
  const db = new Database(path);
  db.prepare('INSERT INTO migrations (version, name) VALUES (?, ?)').run(LATEST + 7, 'from the future');
  db.close();
  const versions = new RegExp(`migration ${LATEST + 7}\\b.*\\b${LATEST}\\b`);
  for (const command of [
    ...readOnlyCommands(dir),
    ['client-app', 'create', '--name', 'y'],
    [
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
    ],
  ]) {
    oneLineError(t, await admin(path, ...command), 2, versions);
  }
  const api = startCli(t, ['api'], { ...env, DATABASE_PATH: path, PORT: '0', MQTT_PORT: '0', LOG_LEVEL: 'fatal' });
  t.is(await api.exited, 2);
  t.is(api.stderr.length, 1);
  t.regex(api.stderr[0] ?? '', versions);
  const start = startCli(
    t,
    ['start', '--data-dir', dir, '--port', '0', '--mqtt-port', '0', '--log-level', 'fatal'],
    env,
  );
  t.is(await start.exited, 2);
  t.is(start.stderr.length, 1);
  t.regex(start.stderr[0] ?? '', versions);
  const after = new Database(path, { readonly: true });
  t.is((after.prepare('SELECT count(*) AS n FROM client_apps').get() as { n: number }).n, 1, 'nothing written');
  after.close();
});

test('a read-only command on a database that is behind does not migrate it: one line, exit 2', async (t) => {
  const dir = tempDir(t, 'parkbench-db-');
  const path = join(dir, 'old.sqlite');
  const db = new Database(path);
  migrate(db, MIGRATIONS.slice(0, -1));
  db.close();
  oneLineError(
    t,
    await admin(path, 'forwarding', 'status'),
    2,
    new RegExp(`migration ${LATEST - 1}\\b.*needs migration ${LATEST}\\b`),
  );
  const check = new Database(path, { readonly: true });
  t.is((check.prepare('SELECT max(version) AS v FROM migrations').get() as { v: number }).v, LATEST - 1);
  check.close();
});

/**
 * Runs the CLI so that file modes bind it. Root writes through chmod 0444 and
 * read-only folders by its capabilities CAP_DAC_OVERRIDE and
 * CAP_DAC_READ_SEARCH, so as root the child runs without them (setpriv's
 * bounding set): it stays the owner of the checkout, which another user
 * (nobody) may not even be able to enter (a clone in a 0700 mktemp folder).
 */
function runUnprivileged(args: string[]): Promise<CliResult> {
  const asRoot = process.getuid?.() === 0;
  const [command, commandArgs] = asRoot
    ? ['setpriv', ['--bounding-set=-dac_override,-dac_read_search', process.execPath, builtBin(), ...args]]
    : [process.execPath, [builtBin(), ...args]];
  return new Promise((resolve) => {
    execFile(command, commandArgs, { env: { ...process.env, ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

test('read-only commands work on a database file and folder this user may only read (WAL, no -shm)', async (t) => {
  const dir = tempDir(t, 'parkbench-db-');
  const folder = join(dir, 'ro');
  const path = join(folder, 'parkbench.sqlite');
  t.is(
    (
      await admin(
        path,
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
  t.is(
    (
      await admin(
        path,
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
      )
    ).code,
    0,
  );
  t.deepEqual(readdirSync(folder), ['parkbench.sqlite'], 'closed cleanly: no -wal, no -shm');
  chmodSync(path, 0o444);
  chmodSync(folder, 0o555);
  chmodSync(dir, 0o755);
  t.teardown(() => chmodSync(folder, 0o755));

  const forwarding = await runUnprivileged(['admin', 'forwarding', 'status', '--json', '--database', path]);
  t.is(forwarding.code, 0, forwarding.stderr);
  t.deepEqual(JSON.parse(forwarding.stdout), []);
  const boxes = await runUnprivileged(['admin', 'box', 'status', '--json', '--database', path]);
  t.is(boxes.code, 0, boxes.stderr);
  t.like(JSON.parse(boxes.stdout), [{ module_id: 9101 }]);
  // A command that writes fails in one line, as it must.
  const write = await runUnprivileged(['admin', 'client-app', 'create', '--name', 'x', '--database', path]);
  t.not(write.code, 0);
  t.regex(write.stderr, /^parkbench: [^\n]+\n$/);
  t.deepEqual(readdirSync(folder), ['parkbench.sqlite']);
});

test('read-only commands read a WAL database in place while a writer holds it (commits still in the -wal file)', async (t) => {
  const dir = tempDir(t, 'parkbench-db-');
  const folder = join(dir, 'live');
  const path = join(folder, 'parkbench.sqlite');
  t.is(
    (
      await admin(
        path,
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
  // A writer keeps the database open (as a running API does), so the box below stays in the -wal file.
  const writer = new Database(path);
  t.teardown(() => writer.close());
  writer.pragma('wal_autocheckpoint = 0');
  writer.prepare('SELECT count(*) FROM boxes').get(); // now attached to the WAL: the last to leave cleans it up
  t.is(
    (
      await admin(
        path,
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
      )
    ).code,
    0,
  );
  t.true(readdirSync(folder).includes('parkbench.sqlite-wal'));
  chmodSync(folder, 0o555);
  chmodSync(dir, 0o755);
  t.teardown(() => chmodSync(folder, 0o755));

  const boxes = await runUnprivileged(['admin', 'box', 'status', '--json', '--database', path]);
  t.is(boxes.code, 0, boxes.stderr);
  t.like(JSON.parse(boxes.stdout), [{ module_id: 9101 }], 'the commit still in the -wal file is seen');
});
