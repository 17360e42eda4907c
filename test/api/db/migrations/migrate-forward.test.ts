// Databases made by a release's own code (test/fixtures/databases/, made by
// make.sh there from commit 01e9611) migrate forward with today's code, keep
// every row they held, and end with the schema of a database migrated from
// empty: on SQLite the file itself, on PostgreSQL a pg_dump of it restored
// on the test server. Exactly: SQLite's stored statements, PostgreSQL's
// columns, constraints and indexes as its catalog prints them.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import test, { type ExecutionContext } from 'ava';
import Database from 'better-sqlite3';
import pg from 'pg';
import { parsePostgresUrl } from '../../../../api/config/index.js';
import { migratePostgres } from '../../../../api/db/migrate-postgres.js';
import { migrate } from '../../../../api/db/migrate-sqlite.js';
import { MIGRATIONS } from '../../../../api/db/migrations/index.js';
import { createPostgresPool } from '../../../../api/db/postgres-pool.js';
import { postgresForFile } from '../../../helpers/postgres.js';
import { testNeeding } from '../../../helpers/requires.js';

const withPostgres = testNeeding('postgres', test);
const server = postgresForFile(test);

const RELEASE = '01e9611';
const fixture = (name: string) => new URL(`../../../fixtures/databases/${name}`, import.meta.url);

/** Each table's rows as the fixture's columns hold them, in primary key order
 * (columns a later version adds are not compared). */
type Rows = Record<string, unknown[]>;
type Columns = Record<string, string[]>;

/** What the migrations table records: version and name (not when). */
type Recorded = { version: number; name: string }[];

// SQLite

function sqliteSchema(db: Database.Database): unknown[] {
  return db
    .prepare(
      "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY type, name",
    )
    .all();
}

function sqliteColumns(db: Database.Database): Columns {
  const columns: Columns = {};
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
    .pluck()
    .all() as string[];
  for (const table of tables)
    columns[table] = (db.pragma(`table_info(${table})`) as { name: string }[]).map((column) => column.name);
  return columns;
}

function sqliteRows(db: Database.Database, columns: Columns): Rows {
  const rows: Rows = {};
  for (const [table, names] of Object.entries(columns)) {
    if (table === 'migrations') continue;
    rows[table] = db.prepare(`SELECT ${names.join(', ')} FROM ${table} ORDER BY rowid`).all();
  }
  return rows;
}

function sqliteRecorded(db: Database.Database): Recorded {
  return db.prepare('SELECT version, name FROM migrations ORDER BY version').all() as Recorded;
}

test(`a SQLite file made by ${RELEASE} migrates forward, keeps its rows, and ends as a fresh one`, (t) => {
  const folder = mkdtempSync(join(tmpdir(), 'parkbench-forward-'));
  t.teardown(() => rmSync(folder, { recursive: true, force: true }));
  const path = join(folder, 'parkbench.sqlite');
  writeFileSync(path, gunzipSync(readFileSync(fixture(`sqlite-${RELEASE}.sqlite.gz`))));
  const old = new Database(path);
  t.teardown(() => old.close());
  old.pragma('foreign_keys = ON');
  const recordedBefore = sqliteRecorded(old);
  const columns = sqliteColumns(old);
  const rows = sqliteRows(old, columns);
  t.true(Object.values(rows).filter((held) => held.length > 0).length >= 6, 'the fixture holds rows in several tables');

  t.is(migrate(old), MIGRATIONS.length - recordedBefore.length, 'the versions after the release, once');
  t.is(migrate(old), 0);

  const fresh = new Database(':memory:');
  t.teardown(() => fresh.close());
  migrate(fresh);
  t.deepEqual(sqliteSchema(old), sqliteSchema(fresh), 'the same tables, indexes and statements');
  t.deepEqual(sqliteRecorded(old), sqliteRecorded(fresh), 'the same versions recorded');
  t.deepEqual(recordedBefore, sqliteRecorded(fresh).slice(0, recordedBefore.length), 'the release recorded as today');
  t.deepEqual(sqliteRows(old, columns), rows, 'every row as it was');
  t.deepEqual(old.pragma('foreign_key_check'), []);
  t.is(old.pragma('integrity_check', { simple: true }), 'ok');
});

// PostgreSQL

let made = 0;

/** An empty database on the test server, and its URL. */
async function emptyDatabase(): Promise<string> {
  const name = `forward_${process.pid}_${(made += 1)}`;
  const admin = new pg.Client({ connectionString: server().url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(server().url);
  url.pathname = `/${name}`;
  return url.toString();
}

function poolOn(t: ExecutionContext, url: string): pg.Pool {
  const pool = createPostgresPool(parsePostgresUrl(url), { max: 2, onIdleError: (error) => t.log(error.message) });
  t.teardown(() => pool.end());
  return pool;
}

/** Every column, constraint and index of the current schema, as the catalog prints them. */
async function postgresSchema(pool: pg.Pool): Promise<Record<string, unknown[]>> {
  const columns = await pool.query(
    `SELECT table_name, column_name, ordinal_position, data_type, is_nullable, column_default, is_identity,
       identity_generation
     FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`,
  );
  const constraints = await pool.query(
    `SELECT rel.relname AS table_name, con.conname, con.contype, pg_get_constraintdef(con.oid) AS definition
     FROM pg_constraint con JOIN pg_class rel ON rel.oid = con.conrelid
     WHERE rel.relnamespace = current_schema()::regnamespace ORDER BY rel.relname, con.conname`,
  );
  const indexes = await pool.query(
    'SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() ORDER BY tablename, indexname',
  );
  return { columns: columns.rows, constraints: constraints.rows, indexes: indexes.rows };
}

async function postgresColumns(pool: pg.Pool): Promise<Columns> {
  const found = await pool.query<{ table_name: string; column_name: string }>(
    `SELECT table_name, column_name FROM information_schema.columns
     WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`,
  );
  const columns: Columns = {};
  for (const { table_name: table, column_name: column } of found.rows) (columns[table] ??= []).push(column);
  return columns;
}

async function postgresRows(pool: pg.Pool, columns: Columns): Promise<Rows> {
  const rows: Rows = {};
  for (const [table, names] of Object.entries(columns)) {
    if (table === 'migrations') continue;
    rows[table] = (await pool.query(`SELECT ${names.join(', ')} FROM ${table} ORDER BY ${names.join(', ')}`)).rows;
  }
  return rows;
}

async function postgresRecorded(pool: pg.Pool): Promise<Recorded> {
  return (await pool.query<Recorded[number]>('SELECT version, name FROM migrations ORDER BY version')).rows;
}

withPostgres(
  `a PostgreSQL database made by ${RELEASE} migrates forward, keeps its rows, and ends as a fresh one`,
  async (t) => {
    const url = await emptyDatabase();
    // The dump sets its session's search_path to nothing: a client of its
    // own, not one of the pool's.
    const restore = new pg.Client({ connectionString: url });
    await restore.connect();
    try {
      await restore.query(readFileSync(fixture(`postgres-${RELEASE}.sql`), 'utf8'));
    } finally {
      await restore.end();
    }
    const old = poolOn(t, url);
    const recordedBefore = await postgresRecorded(old);
    const columns = await postgresColumns(old);
    const rows = await postgresRows(old, columns);
    t.true(
      Object.values(rows).filter((held) => held.length > 0).length >= 6,
      'the fixture holds rows in several tables',
    );

    t.is(await migratePostgres(old), MIGRATIONS.length - recordedBefore.length, 'the versions after the release, once');
    t.is(await migratePostgres(old), 0);

    const fresh = poolOn(t, await emptyDatabase());
    await migratePostgres(fresh);
    t.deepEqual(await postgresSchema(old), await postgresSchema(fresh), 'the same columns, constraints and indexes');
    t.deepEqual(await postgresRecorded(old), await postgresRecorded(fresh), 'the same versions recorded');
    t.deepEqual(
      recordedBefore,
      (await postgresRecorded(fresh)).slice(0, recordedBefore.length),
      'the release recorded as today',
    );
    t.deepEqual(await postgresRows(old, columns), rows, 'every row as it was');
  },
);
