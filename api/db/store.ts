// The store: the server database as repositories see it, SQLite or
// PostgreSQL behind one typed query layer (Kysely<Schema>)
// (docs/decisions/store-sqlite-and-postgresql.md). A repository written against `Store`
// runs its queries through `store.kysely` on both engines and branches on
// `store.dialect` only where the engines differ for speed or semantics (a
// bulk insert, GREATEST against SQLite's two-argument max). What differs by
// engine in how transactions run, the store gives: its group commit engine
// (api/db/group-commit.ts) and its row locks (`lockForUpdate`,
// api/db/row-locks.ts).
//
// On SQLite the store wraps one better-sqlite3 connection (api/db/open.ts),
// which Kysely runs on and which code written for SQLite alone (box-log
// ingestion's statements) reaches as `store.sqlite`: both see the same data
// and the same transactions' effects. On PostgreSQL it owns a pg pool,
// migrated under the advisory lock before it is handed out.
import { CompiledQuery, Kysely, PostgresDialect, sql, type Compilable, type Expression, type RawBuilder } from 'kysely';
import type pg from 'pg';
import type { PostgresUrl } from '../config/index.js';
import { BetterSqliteDialect } from './kysely-sqlite.js';
import type { Executor } from './executor.js';
import { PostgresGroupCommit } from './group-commit-postgres.js';
import { SqliteGroupCommit } from './group-commit-sqlite.js';
import type { GroupCommitEngine, GroupCommitEngineOptions } from './group-commit-units.js';
import type { Db } from './open.js';
import { checkPostgresCurrent, migratePostgres } from './migrate-postgres.js';
import { postgresRowLocks, sqliteRowLocks, type RowLocks } from './row-locks.js';
import type { Schema } from './schema.js';

export type { Executor } from './executor.js';

export type Dialect = 'sqlite' | 'postgres';

interface StoreBase extends RowLocks {
  readonly kysely: Kysely<Schema>;
  /** How this engine runs the groups of a group commit (api/db/group-commit.ts). */
  groupCommitEngine(options: GroupCommitEngineOptions): GroupCommitEngine;
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
    groupCommitEngine: (options) => new SqliteGroupCommit(kysely, db, options),
    ...sqliteRowLocks,
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
  // pg loads with the first PostgreSQL store: a process on SQLite never loads it.
  const { createPostgresPool } = await import('./postgres-pool.js');
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
  return postgresStore(pool);
}

/** The store over a pool on a migrated database (openPostgresStore opens
 * and migrates one); its `close` ends the pool. */
export function postgresStore(pool: pg.Pool): PostgresStore {
  const kysely = new Kysely<Schema>({ dialect: new PostgresDialect({ pool }) });
  return {
    dialect: 'postgres',
    kysely,
    pool,
    groupCommitEngine: (options) => new PostgresGroupCommit(kysely, options),
    ...postgresRowLocks,
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
 * (test/api/db/store.test.ts checks it on both engines).
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
