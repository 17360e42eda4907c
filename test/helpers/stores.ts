// A test on each store: `storeTest(title, fn)` declares the test
// once per store, `title [sqlite]` and `title [postgres]`, each with a
// fresh, migrated database of its own:
//
// - SQLite: a file in a temporary folder, opened as the API opens it
//   (api/db/open.ts), wrapped by sqliteStore;
// - PostgreSQL: a database made for the test from a template migrated once
//   per file (CREATE DATABASE ... TEMPLATE: tens of milliseconds), on the
//   file's server (test/helpers/postgres.ts), dropped after the test.
//
// PARKBENCH_TEST_STORE picks the stores: `sqlite`, `postgres`, or both
// (unset or `both`). The PostgreSQL tests are declared through
// testNeeding('postgres'): skipped with one line where PostgreSQL is not
// installed, a failure under CI.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext, TestFn } from 'ava';
import pg from 'pg';
import { parsePostgresUrl } from '../../api/config/index.js';
import { openDatabase } from '../../api/db/open.js';
import { openPostgresStore, sqliteStore, type Dialect, type Store } from '../../api/db/store.js';
import { EXISTING_SERVER_VARIABLE, startTestDatabase, type TestDatabase } from './postgres.js';
import { testNeeding } from './requires.js';

/** Names the store(s) a test run uses: sqlite, postgres or both. */
export const TEST_STORE_VARIABLE = 'PARKBENCH_TEST_STORE';

/** The stores this run tests on, from PARKBENCH_TEST_STORE. */
export function testedStores(value = process.env[TEST_STORE_VARIABLE] ?? ''): readonly Dialect[] {
  if (value === '' || value === 'both') return ['sqlite', 'postgres'];
  if (value === 'sqlite' || value === 'postgres') return [value];
  throw new Error(`${TEST_STORE_VARIABLE}=${value}: give sqlite, postgres or both`);
}

export type StoreTestFn = (t: ExecutionContext, store: Store) => Promise<void> | void;

export interface StoreTests {
  /** Declares `title [dialect]` for each tested store. */
  (title: string, implementation: StoreTestFn): void;
  /** The same, run serially (for tests that start processes or measure). */
  serial(title: string, implementation: StoreTestFn): void;
  /** `title [dialect]` on that store only, for what exists on one engine only (say why in the title). */
  on(dialect: Dialect, title: string, implementation: StoreTestFn): void;
}

/** The `storeTest` of a test file (call once, at the top of the file). */
export function storeTests(test: TestFn): StoreTests {
  const stores = testedStores();
  const templates = new PostgresTemplates();
  // One hook, in this order: the template is dropped while the server is up
  // (an existing server keeps what is not dropped), then the server stops.
  test.after.always(async () => {
    const server = await templates.server;
    if (server === undefined) return;
    try {
      await templates.drop(server);
    } finally {
      await server.stop();
    }
  });
  const declare = (serial: boolean, only?: Dialect) => (title: string, implementation: StoreTestFn) => {
    for (const dialect of stores) {
      if (only !== undefined && dialect !== only) continue;
      const base = serial ? test.serial : test;
      const declareOn = dialect === 'postgres' ? testNeeding('postgres', base) : base;
      declareOn(`${title} [${dialect}]`, async (t: ExecutionContext) => {
        const store = dialect === 'sqlite' ? openSqliteStore(t) : await templates.open(t);
        await implementation(t, store);
      });
    }
  };
  const storeTest = declare(false) as StoreTests;
  storeTest.serial = declare(true);
  storeTest.on = (dialect, title, implementation) => {
    declare(false, dialect)(title, implementation);
  };
  return storeTest;
}

function openSqliteStore(t: ExecutionContext): Store {
  const dir = mkdtempSync(join(tmpdir(), 'parkbench-store-'));
  const db = openDatabase(join(dir, 'parkbench.db'));
  const store = sqliteStore(db);
  t.teardown(async () => {
    await store.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}

/** The file's server, started at its first PostgreSQL test, and databases made from one migrated template on it. */
class PostgresTemplates {
  server: Promise<TestDatabase> | undefined;
  #template: Promise<string> | undefined;
  #count = 0;
  #creating: Promise<unknown> = Promise.resolve();

  async open(t: ExecutionContext): Promise<Store> {
    const server = await (this.server ??= startTestDatabase());
    const template = await (this.#template ??= this.#makeTemplate(server));
    const name = `${template}_${++this.#count}`;
    // One at a time: PostgreSQL refuses to copy a template another copy is reading.
    const created = this.#creating.then(() => createFromTemplate(server.url, name, template));
    this.#creating = created.catch(() => undefined);
    await created;
    const store = await openPostgresStore(parsePostgresUrl(urlOf(server.url, name)), {
      onIdleError: () => undefined,
      maxConnections: 4,
    });
    t.teardown(async () => {
      await store.close();
      await onServer(server.url, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    });
    return store;
  }

  async drop(server: TestDatabase): Promise<void> {
    const template = await this.#template?.catch(() => undefined);
    if (template === undefined) return;
    await onServer(server.url, (client) => client.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`));
  }

  /** A migrated template of this process on the server (test apps' copies). */
  templateOn(server: TestDatabase): Promise<string> {
    return this.#makeTemplate(server, `parkbench_app_template_${process.pid}`);
  }

  async #makeTemplate(server: TestDatabase, name = `parkbench_template_${process.pid}`): Promise<string> {
    await onServer(server.url, (client) => client.query(`CREATE DATABASE ${name}`));
    // Migrated, then closed: CREATE DATABASE ... TEMPLATE needs nobody connected to it.
    const store = await openPostgresStore(parsePostgresUrl(urlOf(server.url, name)), { onIdleError: () => undefined });
    await store.close();
    // A closed pool's backends leave a moment later; a copy meanwhile waits 5 s and fails.
    await onServer(server.url, async (client) => {
      const connected = async () =>
        (
          await client.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [
            name,
          ])
        ).rows[0]?.n ?? 0;
      for (let waited = 0; (await connected()) > 0 && waited < 5_000; waited += 10)
        await new Promise((resolve) => setTimeout(resolve, 10));
    });
    return name;
  }
}

/** The migrated template of this process on the run's server, made at its first use. */
let appTemplate: { server: TestDatabase; name: Promise<string> } | undefined;
let appDatabases = 0;
let creatingAppDatabase: Promise<unknown> = Promise.resolve();

/**
 * A fresh, migrated database for one test app on the run's server
 * (PARKBENCH_TEST_DATABASE_URL: `npm test` starts one through
 * scripts/with-postgres.ts), copied from a template migrated once per test
 * file, and dropped at the test's end, after what the test registered later
 * (ava runs teardowns last first): an app on it closes first.
 */
export async function databaseForTest(t: ExecutionContext): Promise<string> {
  const serverUrl = process.env[EXISTING_SERVER_VARIABLE] ?? '';
  if (serverUrl === '')
    throw new Error(
      `a test app on PostgreSQL needs a server: run through scripts/with-postgres.ts (npm test does) or set ${EXISTING_SERVER_VARIABLE}`,
    );
  if (appTemplate === undefined) {
    const server: TestDatabase = { url: serverUrl, log: () => '', stop: () => Promise.resolve() };
    appTemplate = { server, name: new PostgresTemplates().templateOn(server) };
  }
  const template = await appTemplate.name;
  const name = `${template}_${++appDatabases}`;
  // One at a time: PostgreSQL refuses to copy a template another copy is reading.
  const created = creatingAppDatabase.then(() => createFromTemplate(serverUrl, name, template));
  creatingAppDatabase = created.catch(() => undefined);
  await created;
  t.teardown(() => onServer(serverUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)));
  return urlOf(serverUrl, name);
}

function urlOf(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
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

/** A backend of a closed pool may still be leaving the template (55006,
 * "being accessed by other users") for a few milliseconds: tried again. */
async function createFromTemplate(serverUrl: string, name: string, template: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await onServer(serverUrl, (client) => client.query(`CREATE DATABASE ${name} TEMPLATE ${template}`));
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== '55006' || attempt >= 50) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}
