// PostgreSQL's baseline (the PostgreSQL step of the baseline version,
// api/db/migrations/) equals SQLite's schema at that version: both built for
// real (SQLite through migrate(), PostgreSQL on the test server) and
// described the same way, table by table, column by column (name, type
// class, nullability, default or not, primary key), with their indexes and
// unique constraints. Then the baseline with the PostgreSQL steps of the
// later versions against SQLite after its last one. A version whose two
// steps differ fails here. CHECK
// constraints and foreign keys are not compared (their text differs between
// the engines); index predicates are compared as present or not.
// Also the pg pool of api/db/postgres-pool.ts: int8 read as a Number.
import test, { type ExecutionContext } from 'ava';
import Database from 'better-sqlite3';
import type pg from 'pg';
import { parsePostgresUrl } from '../../../../api/config/index.js';
import { POSTGRES_MIGRATIONS } from '../../../../api/db/migrate-postgres.js';
import { migrate } from '../../../../api/db/migrate-sqlite.js';
import { MIGRATIONS, POSTGRES_BASELINE_VERSION } from '../../../../api/db/migrations/index.js';
import { createPostgresPool } from '../../../../api/db/postgres-pool.js';
import { postgresForFile } from '../../../helpers/postgres.js';
import { testNeeding } from '../../../helpers/requires.js';

const withPostgres = testNeeding('postgres', test);
const database = postgresForFile(test);

type TypeClass = 'integer' | 'text' | 'blob' | 'real';

interface Column {
  name: string;
  type: TypeClass;
  notNull: boolean;
  hasDefault: boolean;
}

interface Index {
  name: string;
  columns: string[];
  unique: boolean;
  partial: boolean;
}

interface Table {
  columns: Column[];
  primaryKey: string[];
  /** Unique constraints (UNIQUE in a table's definition), by their columns. */
  uniques: string[];
  /** Indexes made with CREATE INDEX, by name. */
  indexes: Index[];
}

type Schema = Record<string, Table>;

function sqliteClass(declared: string): TypeClass {
  const classes: Record<string, TypeClass> = { INTEGER: 'integer', TEXT: 'text', BLOB: 'blob', REAL: 'real' };
  const found = classes[declared.toUpperCase()];
  if (found === undefined) throw new Error(`no type class for SQLite's ${declared}`);
  return found;
}

function postgresClass(dataType: string): TypeClass {
  const classes: Record<string, TypeClass> = {
    smallint: 'integer',
    integer: 'integer',
    bigint: 'integer',
    text: 'text',
    bytea: 'blob',
    real: 'real',
    'double precision': 'real',
  };
  const found = classes[dataType];
  if (found === undefined) throw new Error(`no type class for PostgreSQL's ${dataType}`);
  return found;
}

function describeSqlite(db: Database.Database): Schema {
  const schema: Schema = {};
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%' ORDER BY name")
    .pluck()
    .all() as string[];
  for (const table of tables) {
    const info = db.pragma(`table_info(${table})`) as {
      name: string;
      type: string;
      notnull: number;
      dflt_value: unknown;
      pk: number;
    }[];
    const indexes = db.pragma(`index_list(${table})`) as {
      name: string;
      unique: number;
      origin: string;
      partial: number;
    }[];
    const columnsOf = (index: string) =>
      (db.pragma(`index_info(${index})`) as { seqno: number; name: string }[])
        .sort((a, b) => a.seqno - b.seqno)
        .map((column) => column.name);
    schema[table] = {
      columns: info.map((column) => ({
        name: column.name,
        type: sqliteClass(column.type),
        // A primary key column holds no null in either (SQLite's rowid alias cannot).
        notNull: column.notnull === 1 || column.pk > 0,
        hasDefault: column.dflt_value !== null,
      })),
      primaryKey: info
        .filter((column) => column.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((column) => column.name),
      uniques: indexes
        .filter((index) => index.origin === 'u')
        .map((index) => columnsOf(index.name).join(', '))
        .sort(),
      indexes: indexes
        .filter((index) => index.origin === 'c')
        .map((index) => ({
          name: index.name,
          columns: columnsOf(index.name),
          unique: index.unique === 1,
          partial: index.partial === 1,
        }))
        .sort((a, b) => a.name.localeCompare(b.name)),
    };
  }
  return schema;
}

async function describePostgres(client: pg.PoolClient, schemaName: string): Promise<Schema> {
  const schema: Schema = {};
  const tables = await client.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE' ORDER BY table_name",
    [schemaName],
  );
  for (const { table_name: table } of tables.rows) {
    const columns = await client.query<{
      column_name: string;
      data_type: string;
      is_nullable: string;
      column_default: string | null;
    }>(
      `SELECT column_name, data_type, is_nullable, column_default FROM information_schema.columns
       WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`,
      [schemaName, table],
    );
    const indexes = await client.query<{
      name: string;
      unique: boolean;
      partial: boolean;
      primary: boolean;
      constraint: string | null;
      columns: string[];
    }>(
      `SELECT c.relname AS name, i.indisunique AS unique, i.indpred IS NOT NULL AS partial, i.indisprimary AS primary,
         con.contype AS constraint,
         array(SELECT a.attname::text FROM unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, n)
               JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum ORDER BY k.n) AS columns
       FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
       LEFT JOIN pg_constraint con ON con.conindid = i.indexrelid AND con.contype IN ('p', 'u')
       WHERE i.indrelid = (quote_ident($1) || '.' || quote_ident($2))::regclass`,
      [schemaName, table],
    );
    schema[table] = {
      columns: columns.rows.map((column) => ({
        name: column.column_name,
        type: postgresClass(column.data_type),
        notNull: column.is_nullable === 'NO',
        // An identity column has no column_default: the database assigns it, as SQLite's rowid.
        hasDefault: column.column_default !== null,
      })),
      primaryKey: indexes.rows.find((index) => index.primary)?.columns ?? [],
      uniques: indexes.rows
        .filter((index) => index.constraint === 'u')
        .map((index) => index.columns.join(', '))
        .sort(),
      indexes: indexes.rows
        .filter((index) => index.constraint === null)
        .map(({ name, columns: indexColumns, unique, partial }) => ({ name, columns: indexColumns, unique, partial }))
        .sort((a, b) => a.name.localeCompare(b.name)),
    };
  }
  return schema;
}

/** SQLite's schema after the migrations up to `version` (all of them by default). */
function sqliteSchema(version = Infinity): Schema {
  const db = new Database(':memory:');
  try {
    migrate(
      db,
      MIGRATIONS.filter((migration) => migration.version <= version),
    );
    return describeSqlite(db);
  } finally {
    db.close();
  }
}

let schemas = 0;

/** A client on a schema of its own (the test server is shared by the file's tests). */
async function postgresSchema(
  t: ExecutionContext,
  build: (client: pg.PoolClient) => Promise<unknown>,
): Promise<{ client: pg.PoolClient; describe: () => Promise<Schema> }> {
  const pool = createPostgresPool(parsePostgresUrl(database().url), {
    max: 1,
    onIdleError: (error) => t.log(`idle connection: ${error.message}`),
  });
  t.teardown(() => pool.end());
  const client = await pool.connect();
  t.teardown(() => client.release());
  const name = `baseline_${process.pid}_${(schemas += 1)}`;
  await client.query(`CREATE SCHEMA ${name}`);
  await client.query(`SET search_path TO ${name}`);
  await build(client);
  return { client, describe: () => describePostgres(client, name) };
}

test('the baseline stands for the migrations up to its version; each later one has its PostgreSQL form', (t) => {
  const named = (migrations: readonly { version: number; name: string }[]) =>
    migrations.map(({ version, name }) => ({ version, name }));
  t.deepEqual(
    named(POSTGRES_MIGRATIONS.baseline),
    named(MIGRATIONS.filter((migration) => migration.version <= POSTGRES_BASELINE_VERSION)),
  );
  t.deepEqual(
    named(POSTGRES_MIGRATIONS.later),
    named(MIGRATIONS.filter((migration) => migration.version > POSTGRES_BASELINE_VERSION)),
    'the same versions and names after the baseline',
  );
});

withPostgres("PostgreSQL's baseline equals SQLite's schema at the baseline's version", async (t) => {
  const { describe } = await postgresSchema(t, (client) => client.query(POSTGRES_MIGRATIONS.baselineSql));
  const postgres = await describe();
  const sqlite = sqliteSchema(POSTGRES_BASELINE_VERSION);
  t.deepEqual(Object.keys(postgres).sort(), Object.keys(sqlite).sort(), 'the same tables');
  for (const table of Object.keys(sqlite)) t.deepEqual(postgres[table], sqlite[table], table);
});

withPostgres("PostgreSQL's baseline and later migrations equal SQLite's schema after the last migration", async (t) => {
  const { describe } = await postgresSchema(t, async (client) => {
    await client.query(POSTGRES_MIGRATIONS.baselineSql);
    for (const migration of POSTGRES_MIGRATIONS.later) await client.query(migration.sql);
  });
  const postgres = await describe();
  const sqlite = sqliteSchema();
  t.deepEqual(Object.keys(postgres).sort(), Object.keys(sqlite).sort(), 'the same tables');
  for (const table of Object.keys(sqlite)) t.deepEqual(postgres[table], sqlite[table], table);
});

withPostgres(
  'a drift fails the comparison: a column, a nullability, a default, an index, a unique constraint',
  async (t) => {
    const sqlite = sqliteSchema(POSTGRES_BASELINE_VERSION);
    for (const drift of [
      'ALTER TABLE box_logs ADD COLUMN extra integer',
      'ALTER TABLE box_logs ALTER COLUMN command SET NOT NULL',
      'ALTER TABLE boxes ALTER COLUMN skew_seconds DROP DEFAULT',
      'ALTER TABLE box_logs ALTER COLUMN latitude TYPE text',
      'DROP INDEX tokens_family',
      'CREATE INDEX box_logs_received ON box_logs(received_at)',
      'ALTER TABLE users DROP CONSTRAINT users_email_key',
    ]) {
      const { describe } = await postgresSchema(t, async (client) => {
        await client.query(POSTGRES_MIGRATIONS.baselineSql);
        await client.query(drift);
      });
      t.notDeepEqual(await describe(), sqlite, drift);
    }
  },
);

withPostgres('the pool reads int8 as a Number, and refuses one beyond 2^53 rather than round it', async (t) => {
  const { client } = await postgresSchema(t, (client) => client.query(POSTGRES_MIGRATIONS.baselineSql));
  const now = Date.now();
  const inserted = await client.query<{ id: unknown; created_at: unknown }>(
    `INSERT INTO secured_parkings (name, currency, price_per_hour_minor, max_duration_minutes, tries, access_mode, parking_key, created_at)
     VALUES ('p', 'EUR', 100, 60, 3, 'sealed', 'k', $1) RETURNING id, created_at`,
    [now],
  );
  t.deepEqual(inserted.rows[0], { id: 1, created_at: now });
  const counted = await client.query<{ count: unknown }>('SELECT count(*) AS count FROM secured_parkings');
  t.is(counted.rows[0]?.count, 1);
  t.is((await client.query<{ big: unknown }>('SELECT 9007199254740991::bigint AS big')).rows[0]?.big, 2 ** 53 - 1);
  await t.throwsAsync(client.query('SELECT 9007199254740993::bigint AS big'), { message: /beyond 2\^53/ });
});
