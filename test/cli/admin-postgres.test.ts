// `parkbench admin ... --database <path or url>`: every admin
// command takes a postgres:// URL as it takes a SQLite file, through the real
// entry point. The same commands on each engine give the same output; a
// read-only command never migrates an empty PostgreSQL database; a server
// that refuses or does not answer is one line naming the URL without its
// password; a file given as --database wins over DATABASE_URL.
import { join } from 'node:path';
import avaTest, { type ExecutionContext } from 'ava';
import pg from 'pg';
import { freePort } from '../../lib/free-port.js';
import { tempDir } from '../helpers/api-app.js';
import { postgresForFile } from '../helpers/postgres.js';
import { testNeeding } from '../helpers/requires.js';
import { runCli, type CliResult } from '../helpers/run-cli.js';

const test = testNeeding('postgres', avaTest);
const server = postgresForFile(avaTest);
const env = { SCRYPT_LOG2_N: '10', MQTT_URL: '', DATABASE_URL: '' };

const admin = (database: string, ...args: string[]) =>
  runCli(['admin', ...args, '--database', database, '--json'], { env });

async function json<T = Record<string, unknown>>(t: ExecutionContext, result: Promise<CliResult>): Promise<T> {
  const done = await result;
  t.is(done.code, 0, done.stderr);
  return JSON.parse(done.stdout) as T;
}

/** A fresh, empty database on the file's server, dropped after the test. */
async function emptyDatabase(t: ExecutionContext): Promise<string> {
  const name = `parkbench_admin_${process.pid}_${++made}`;
  const onServer = async (text: string) => {
    const client = new pg.Client({ connectionString: server().url });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
  };
  await onServer(`CREATE DATABASE ${name}`);
  t.teardown(() => onServer(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  const url = new URL(server().url);
  url.pathname = `/${name}`;
  return url.toString();
}
let made = 0;

/** Parking, boxes, a driver, an operator, forwarding: what each engine answers, ids and secrets left out. */
async function session(t: ExecutionContext, database: string): Promise<unknown[]> {
  const parking = await json(
    t,
    admin(
      database,
      'parking',
      'create',
      '--name',
      'Lot',
      '--currency',
      'EUR',
      '--price-per-hour',
      '2.00',
      '--max-duration-minutes',
      '120',
    ),
  );
  const id = String(parking.id);
  const box = await json(
    t,
    admin(
      database,
      'box',
      'add',
      '--parking',
      id,
      '--module-id',
      '9001',
      '--mac',
      'AA:BB:CC:DD:EE:01',
      '--direction',
      'entrance',
    ),
  );
  const user = await json(
    t,
    admin(
      database,
      'user',
      'create',
      '--email',
      'ada@example.com',
      '--password',
      'correct horse battery',
      '--first-name',
      'Ada',
      '--last-name',
      'Lovelace',
      '--phone',
      '+44 20 7946 0000',
    ),
  );
  const operator = await json(t, admin(database, 'operator', 'add', '--name', 'desk'));
  const operators = await json<{ name: string }[]>(t, admin(database, 'operator', 'list'));
  const forwarding = await json<unknown[]>(t, admin(database, 'forwarding', 'status', '--parking', id));
  const status = await json<Record<string, unknown>[]>(t, admin(database, 'box', 'status', '--parking', id));
  const without = (value: Record<string, unknown>, ...keys: string[]) =>
    Object.fromEntries(Object.entries(value).filter(([key]) => !keys.includes(key)));
  return [
    without(parking, 'id', 'issuer_public_key'),
    without(box, 'parking_id', 'box_key', 'mqtt_password'),
    without(user, 'id', 'created_at'),
    Object.keys(operator).sort(),
    operators.map((each) => each.name),
    forwarding,
    status.map((each) => without(each, 'parking_id')),
  ];
}

test('the same admin commands on a SQLite file and on a PostgreSQL URL give the same answers', async (t) => {
  const file = join(tempDir(t, 'parkbench-admin-pg-'), 'admin.sqlite');
  const url = await emptyDatabase(t);
  const onSqlite = await session(t, file);
  const onPostgres = await session(t, url);
  t.deepEqual(onPostgres, onSqlite);
  // The rows are in PostgreSQL.
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>('SELECT name FROM secured_parkings');
    t.deepEqual(
      rows.map((row) => row.name),
      ['Lot'],
    );
  } finally {
    await client.end();
  }
});

test('a read-only command on an empty PostgreSQL database: one line, exit 2, nothing created', async (t) => {
  const url = await emptyDatabase(t);
  const result = await runCli(['admin', 'forwarding', 'status', '--database', url], { env });
  t.is(result.code, 2, result.stderr);
  t.regex(result.stderr, /^parkbench: [^\n]*holds no parkbench database \(it is empty\)[^\n]*\n$/);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'",
    );
    t.is(rows[0]?.n, 0);
  } finally {
    await client.end();
  }
});

test('a server that does not answer, or refuses the password: one line naming the URL without the password', async (t) => {
  const closed = `postgres://desk:hunter2@127.0.0.1:${await freePort()}/parkbench`;
  const unreachable = await runCli(['admin', 'operator', 'list', '--database', closed], { env });
  t.is(unreachable.code, 1, unreachable.stderr);
  t.regex(unreachable.stderr, /^parkbench: PostgreSQL at postgres:\/\/desk:\*+@127\.0\.0\.1:\d+\/parkbench: [^\n]+\n$/);
  t.false(unreachable.stderr.includes('hunter2'));

  const url = new URL(await emptyDatabase(t));
  url.username = 'nobody_here';
  url.password = 'hunter2';
  const refused = await runCli(['admin', 'operator', 'list', '--database', url.toString()], { env });
  t.not(refused.code, 0);
  t.is(refused.stderr.split('\n').filter(Boolean).length, 1, refused.stderr);
  t.regex(refused.stderr, /PostgreSQL at postgres:\/\/nobody_here:\*+@/);
  t.false(refused.stderr.includes('hunter2'));
});

test('a file given as --database wins over DATABASE_URL', async (t) => {
  const url = await emptyDatabase(t);
  const file = join(tempDir(t, 'parkbench-admin-pg-'), 'admin.sqlite');
  const result = await runCli(['admin', 'operator', 'add', '--name', 'desk', '--database', file, '--json'], {
    env: { ...env, DATABASE_URL: url },
  });
  t.is(result.code, 0, result.stderr);
  // PostgreSQL got nothing: it is still empty (a read-only command says so).
  const listed = await runCli(['admin', 'operator', 'list'], { env: { ...env, DATABASE_URL: url } });
  t.is(listed.code, 2, listed.stderr);
  t.regex(listed.stderr, /holds no parkbench database \(it is empty\)/);
});
