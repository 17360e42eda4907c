// PostgreSQL for a test file: a server of its own (testkit/postgres-server.ts:
// Debian's binaries, a temporary cluster on a free port, fsync off, stopped
// and removed at the end, even when the test process dies), or, when
// PARKBENCH_TEST_DATABASE_URL names an existing server, a fresh database
// made on it with CREATE DATABASE and dropped at the end.
//
// One server per test file at most: `postgresForFile(test)` starts it in
// `test.before` and stops it in `test.after.always`; the tests of the file
// share it (a test wanting a clean slate makes its own tables or schema).
// Declare those tests with `testNeeding('postgres', test)` (requires.ts).
import { randomBytes } from 'node:crypto';
import type { TestFn } from 'ava';
import pg from 'pg';
import { EXISTING_SERVER_VARIABLE, startPostgres } from '../../testkit/postgres-server.js';

export { EXISTING_SERVER_VARIABLE };

export interface TestDatabase {
  /** postgres://… of a database nobody else uses. */
  readonly url: string;
  /** Its server's log when the server is ours (for a failure's message); '' on an existing server. */
  log(): string;
  /** Stops our server and removes its folder, or drops the database made on an existing server. */
  stop(): Promise<void>;
}

/**
 * A database for one test file: on a server of its own, or, given
 * `existingUrl` (PARKBENCH_TEST_DATABASE_URL), a new database on that server.
 */
export async function startTestDatabase(existingUrl = process.env[EXISTING_SERVER_VARIABLE]): Promise<TestDatabase> {
  if (existingUrl === undefined || existingUrl === '') {
    const server = await startPostgres();
    return { url: server.url, log: () => server.log(), stop: () => server.stop() };
  }
  // A name that says whose it is, should a crashed run leave it behind.
  const name = `parkbench_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  await onServer(existingUrl, (client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(existingUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    log: () => '',
    // FORCE (PostgreSQL 13): connections a test left open do not keep it.
    stop: () => onServer(existingUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)),
  };
}

async function onServer(url: string, work: (client: pg.Client) => Promise<unknown>): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}

let declared = false;

/**
 * This test file's database, started before its first test and stopped
 * after its last (also when a test failed). Returns its getter, to call
 * inside a test.
 */
export function postgresForFile(test: TestFn): () => TestDatabase {
  // Each test file runs in a process of its own: a second call is a second server for one file.
  if (declared) throw new Error('postgresForFile: one database per test file; share the getter it returned');
  declared = true;
  let database: TestDatabase | undefined;
  test.before(async () => {
    database = await startTestDatabase();
  });
  test.after.always(async () => {
    await database?.stop();
  });
  return () => {
    if (database === undefined) throw new Error('postgresForFile: the database did not start (see test.before)');
    return database;
  };
}
