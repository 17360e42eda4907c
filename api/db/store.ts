// The store (docs/decisions/issue-18-store.md): the server
// database as repositories see it, SQLite or PostgreSQL behind one typed
// query layer (Kysely<Schema>). A repository written against `Store` runs
// its queries through `store.kysely` on both engines and branches on
// `store.dialect` only where the engines differ for speed or semantics (a
// bulk insert, GREATEST against SQLite's two-argument max, a row lock).
//
// On SQLite the store wraps one better-sqlite3 connection (api/db/open.ts),
// which Kysely runs on and which code written for SQLite alone (box-log
// ingestion's statements) reaches as `store.sqlite`: both see the same data
// and the same transactions' effects. On PostgreSQL it owns a pg pool,
// migrated under the advisory lock before it is handed out.
import {
  CompiledQuery,
  Kysely,
  PostgresDialect,
  sql,
  type Compilable,
  type Expression,
  type RawBuilder,
  type Transaction,
} from 'kysely';
import type pg from 'pg';
import type { PostgresUrl } from '../config.js';
import { BetterSqliteDialect } from './kysely-sqlite.js';
import type { Db } from './open.js';
import { createPostgresPool } from './postgres-pool.js';
import { checkPostgresCurrent, migratePostgres } from './postgres-migrations.js';
import type { Schema } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';

/** What runs a query: the store's Kysely, or a transaction of it. */
export type Executor = Kysely<Schema> | Transaction<Schema>;

interface StoreBase {
  readonly kysely: Kysely<Schema>;
  /** Closes what the store owns (the pool on PostgreSQL; on SQLite the
   * connection stays its opener's: api/db/open-store.ts closes it). */
  close(): Promise<void>;
}

export interface SqliteStore extends StoreBase {
  readonly dialect: 'sqlite';
  /** The connection itself, for the paths that stay synchronous on SQLite (the group commit's box-log insert). */
  readonly sqlite: Db;
}

export interface PostgresStore extends StoreBase {
  readonly dialect: 'postgres';
  readonly pool: pg.Pool;
}

export type Store = SqliteStore | PostgresStore;

/** The store over an open, migrated SQLite connection (api/db/open.ts). */
export function sqliteStore(db: Db): SqliteStore {
  const kysely = new Kysely<Schema>({ dialect: new BetterSqliteDialect({ database: db }) });
  return {
    dialect: 'sqlite',
    kysely,
    sqlite: db,
    // Kysely's destroy would close the connection through our driver: the opener closes it.
    close: () => Promise.resolve(),
  };
}

export interface OpenPostgresOptions {
  /** Pool connections at most. */
  maxConnections?: number;
  /** An idle connection's error (the server went away); logged by the caller. */
  onIdleError: (error: Error) => void;
  /** How the database is named in a refusal (the URL with its password masked). */
  where?: string;
  /** Only read: check that the database is parkbench's and migrated, write nothing. */
  readonly?: boolean;
}

/** Opens a pool on the database, migrates it (once across processes; or,
 * read-only, checks it is current), and hands out the store. */
export async function openPostgresStore(url: PostgresUrl, options: OpenPostgresOptions): Promise<PostgresStore> {
  const pool = createPostgresPool(url, {
    onIdleError: options.onIdleError,
    ...(options.maxConnections === undefined ? {} : { max: options.maxConnections }),
  });
  try {
    if (options.readonly === true) await checkPostgresCurrent(pool, undefined, options.where);
    else await migratePostgres(pool, undefined, options.where);
  } catch (error) {
    await pool.end();
    throw error;
  }
  const kysely = new Kysely<Schema>({ dialect: new PostgresDialect({ pool }) });
  return {
    dialect: 'postgres',
    kysely,
    pool,
    // Ends the pool too.
    close: () => kysely.destroy(),
  };
}

/** The larger of two values: GREATEST on PostgreSQL, SQLite's two-argument max. */
export function greatest<T>(dialect: Dialect, a: Expression<T>, b: Expression<T>): RawBuilder<T> {
  return dialect === 'postgres' ? sql<T>`GREATEST(${a}, ${b})` : sql<T>`max(${a}, ${b})`;
}

/** Rows changed by an insert, update or delete, as a number (Kysely reports a bigint). */
export function changed(result: {
  numUpdatedRows?: bigint;
  numDeletedRows?: bigint;
  numInsertedOrUpdatedRows?: bigint;
}): number {
  return Number(result.numUpdatedRows ?? result.numDeletedRows ?? result.numInsertedOrUpdatedRows ?? 0n);
}

/**
 * A query built and compiled once, run with new values: for the paths run
 * per request or per message (the bearer lookup, a box log's insert), where
 * Kysely's builder and compiler cost more than the query itself
 * (perf:store-driver: 0.26 to 0.35 of the bare rate built per row, 0.66 to
 * 0.88 compiled once). Build it with placeholder values in the order
 * `run` will be given them: the compiled SQL binds them in that order
 * (test/db/store.test.ts checks it on both engines).
 */
export class CompiledOnce<Row> {
  readonly sql: string;
  readonly #parameters: number;

  constructor(query: Compilable<Row>) {
    const compiled = query.compile();
    this.sql = compiled.sql;
    this.#parameters = compiled.parameters.length;
  }

  async run(executor: Executor, values: readonly unknown[]): Promise<Row[]> {
    if (values.length !== this.#parameters)
      throw new Error(`${this.sql}: ${values.length} values for ${this.#parameters} parameters`);
    return (await executor.executeQuery<Row>(CompiledQuery.raw(this.sql, [...values]))).rows;
  }
}
