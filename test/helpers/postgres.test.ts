// test/helpers/postgres.ts and testkit/postgres-server.ts: a real PostgreSQL
// started for a test file, reachable with `pg`, gone with its folder after
// stop() and after the process that started it is killed; on an existing
// server (PARKBENCH_TEST_DATABASE_URL), a fresh database per call, dropped.
import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import test, { type ExecutionContext } from 'ava';
import pg from 'pg';
import { freePort, portIsFree } from '../../lib/free-port.js';
import { postgresBinDir, startPostgres } from '../../testkit/postgres-server.js';
import { postgresForFile, startTestDatabase } from './postgres.js';
import { testNeeding } from './requires.js';

const withPostgres = testNeeding('postgres', test);
const fileDatabase = postgresForFile(test);

async function query<Row extends pg.QueryResultRow>(url: string, text: string): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<Row>(text)).rows;
  } finally {
    await client.end();
  }
}

/** Resolves once `check` holds, polled: the server's end is another process's doing. */
async function eventually(t: ExecutionContext, what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) t.fail(`not within 20 s: ${what}`);
    if (Date.now() > deadline) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

withPostgres("the file's database takes a table, with the test settings (fsync off)", async (t) => {
  const { url } = fileDatabase();
  await query(url, 'CREATE TABLE probe (id integer PRIMARY KEY)');
  await query(url, 'INSERT INTO probe VALUES (1), (2)');
  t.deepEqual(await query(url, 'SELECT id FROM probe ORDER BY id'), [{ id: 1 }, { id: 2 }]);
  if (process.env.PARKBENCH_TEST_DATABASE_URL === undefined)
    t.deepEqual(await query(url, 'SHOW fsync'), [{ fsync: 'off' }]);
});

withPostgres('a server of its own: a table in it, then stop() ends the server and removes its folder', async (t) => {
  const server = await startPostgres();
  t.teardown(() => server.stop());
  t.regex(server.url, /^postgres:\/\/parkbench@127\.0\.0\.1:\d+\/postgres$/);
  await query(server.url, 'CREATE TABLE probe (id integer)');
  // The unix socket is in the folder too.
  const overSocket = new pg.Client({ host: server.dir, port: server.port, user: 'parkbench', database: 'postgres' });
  await overSocket.connect();
  t.deepEqual((await overSocket.query('SELECT count(*)::int AS n FROM probe')).rows, [{ n: 0 }]);
  await overSocket.end();

  await server.stop();
  t.false(existsSync(server.dir), 'the folder is removed');
  t.true(await portIsFree(server.port), 'nothing listens on the port');
  const error = await t.throwsAsync(query(server.url, 'SELECT 1 FROM probe'));
  t.is((error as NodeJS.ErrnoException | undefined)?.code, 'ECONNREFUSED');
  await server.stop(); // a second stop (the teardown's) is harmless
});

withPostgres('a server that cannot start rejects with its log, and leaves no folder', async (t) => {
  const { message } = await t.throwsAsync(startPostgres({ settings: { shared_buffers: 'plenty' } }));
  const dir = /PostgreSQL did not start in (\S+):/.exec(message)?.[1];
  t.truthy(dir, message);
  t.regex(message, /shared_buffers/, "the server's own complaint is in the message");
  t.false(existsSync(dir ?? ''), 'its folder is removed');
});

withPostgres('a port taken between its choice and the bind: the next attempt takes another', async (t) => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => taken.close(() => resolve())));
  const takenPort = (taken.address() as AddressInfo).port;
  const chosen: number[] = [];
  const server = await startPostgres({
    choosePort: async () => {
      const port = chosen.length === 0 ? takenPort : await freePort();
      chosen.push(port);
      return port;
    },
  });
  t.teardown(() => server.stop());
  t.deepEqual(chosen, [takenPort, server.port]);
  t.deepEqual(await query(server.url, 'SELECT 1 AS one'), [{ one: 1 }]);
});

withPostgres('a server whose starter is killed with SIGKILL stops and its folder goes', async (t) => {
  const fixture = fileURLToPath(new URL('../fixtures/postgres-server.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import=tsx', fixture], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => child.kill('SIGKILL'));
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the fixture exited (${String(code)}) before its line`)));
  });
  const started = JSON.parse(line) as { dir: string; port: number; url: string };
  t.deepEqual(await query(started.url, 'SELECT 1 AS one'), [{ one: 1 }]);

  child.kill('SIGKILL');
  await eventually(t, 'the port is free', () => portIsFree(started.port));
  await eventually(t, 'the folder is removed', () => Promise.resolve(!existsSync(started.dir)));
  t.pass();
});

withPostgres('on an existing server: each call makes its own database, and stop() drops it', async (t) => {
  const existing = await startPostgres();
  t.teardown(() => existing.stop());
  const first = await startTestDatabase(existing.url);
  const second = await startTestDatabase(existing.url);
  t.not(first.url, second.url);
  await query(first.url, 'CREATE TABLE probe (id integer)');
  await t.throwsAsync(query(second.url, 'SELECT 1 FROM probe'), { message: /relation "probe" does not exist/ });

  const names = async (): Promise<string[]> =>
    (
      await query<{ datname: string }>(
        existing.url,
        "SELECT datname FROM pg_database WHERE datname LIKE 'parkbench\\_test\\_%' ORDER BY datname",
      )
    ).map((row) => row.datname);
  t.is((await names()).length, 2);
  // A connection left open does not keep a database from being dropped.
  const leftOpen = new pg.Client({ connectionString: first.url });
  leftOpen.on('error', () => undefined);
  await leftOpen.connect();
  await first.stop();
  await second.stop();
  t.deepEqual(await names(), []);
  await leftOpen.end().catch(() => undefined);
});

test('postgresBinDir: PATH when it holds initdb, pg_ctl and postgres, else the newest Debian version', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'pb-pgbin-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const folderWith = async (folder: string, names: string[]): Promise<string> => {
    await mkdir(folder, { recursive: true });
    for (const name of names) {
      await writeFile(join(folder, name), '#!/bin/sh\n');
      await chmod(join(folder, name), 0o755);
    }
    return folder;
  };
  const debian = join(root, 'usr-lib-postgresql');
  await folderWith(join(debian, '9', 'bin'), ['initdb', 'pg_ctl', 'postgres']);
  const newest = await folderWith(join(debian, '15', 'bin'), ['initdb', 'pg_ctl', 'postgres']);
  await folderWith(join(debian, '16', 'bin'), ['initdb']); // incomplete: not chosen
  const partial = await folderWith(join(root, 'partial'), ['initdb', 'postgres']);
  const onPath = await folderWith(join(root, 'path'), ['initdb', 'pg_ctl', 'postgres']);

  t.is(postgresBinDir(`${partial}:${onPath}`, debian), onPath);
  t.is(postgresBinDir(partial, debian), newest);
  t.is(postgresBinDir(partial, join(root, 'missing')), undefined);
});

test('postgresForFile: a second call in one test file is refused (one server per file)', (t) => {
  t.throws(() => postgresForFile(test), { message: /one database per test file/ });
});
