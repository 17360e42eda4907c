// Kysely over better-sqlite3, our driver (docs/decisions/store-sqlite-and-postgresql.md).
// Kysely's own SqliteDriver does two things the SQLite path cannot afford:
//
// 1. It prepares every statement on every execution. Preparing costs about
//    twice the insert itself (a third of the rows/s for box logs), so ours
//    keeps prepared statements in a bounded cache keyed by their SQL, as the
//    repositories' hoisted statements do today.
// 2. Its transactions begin with a deferred BEGIN: a transaction that reads
//    and then writes meets another process's write as SQLITE_BUSY at the
//    lock upgrade, without waiting on the busy timeout. Ours begins
//    write transactions with BEGIN IMMEDIATE (the write lock first, waiting on
//    the busy timeout), and only read-only ones (`setAccessMode('read only')`)
//    with a deferred BEGIN.
//
// Like Kysely's, it has one connection: a mutex hands it to one query or
// transaction at a time.
import type Database from 'better-sqlite3';
import {
  CompiledQuery,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';

/** Statements kept prepared unless told otherwise: more than the distinct
 * statements the repositories run (about 120), so the steady state never evicts. */
export const DEFAULT_STATEMENT_CACHE_SIZE = 500;

export interface BetterSqliteDialectOptions {
  /** An open connection (api/db/open.ts): pragmas and migrations are its owner's. */
  database: Database.Database;
  /** How many prepared statements to keep; the least recently used goes first. */
  statementCacheSize?: number;
}

/** Kysely's SQLite dialect with our driver in place of its own. */
export class BetterSqliteDialect implements Dialect {
  constructor(private readonly options: BetterSqliteDialectOptions) {}
  createAdapter() {
    return new SqliteAdapter();
  }
  createDriver(): Driver {
    return new BetterSqliteDriver(this.options);
  }
  createQueryCompiler(): QueryCompiler {
    return new SqliteQueryCompiler();
  }
  createIntrospector(db: Parameters<Dialect['createIntrospector']>[0]) {
    return new SqliteIntrospector(db);
  }
}

export class BetterSqliteDriver implements Driver {
  readonly connection: BetterSqliteConnection;
  readonly #mutex = new Mutex();

  constructor({ database, statementCacheSize = DEFAULT_STATEMENT_CACHE_SIZE }: BetterSqliteDialectOptions) {
    this.connection = new BetterSqliteConnection(database, statementCacheSize);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.#mutex.lock();
    return this.connection;
  }

  releaseConnection(): Promise<void> {
    this.#mutex.unlock();
    return Promise.resolve();
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    // SQLite has one isolation (serializable); an explicit other one is a mistake to catch.
    if (settings.isolationLevel !== undefined && settings.isolationLevel !== 'serializable')
      throw new Error(`SQLite transactions are serializable; ${settings.isolationLevel} was asked for`);
    const begin = settings.accessMode === 'read only' ? 'BEGIN' : 'BEGIN IMMEDIATE';
    await connection.executeQuery(CompiledQuery.raw(begin));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('COMMIT'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('ROLLBACK'));
  }

  async savepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`SAVEPOINT ${quoteName(name)}`));
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`ROLLBACK TO ${quoteName(name)}`));
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`RELEASE ${quoteName(name)}`));
  }

  /** The connection belongs to whoever opened it (the composition root closes it). */
  destroy(): Promise<void> {
    this.connection.clearCache();
    return Promise.resolve();
  }
}

export class BetterSqliteConnection implements DatabaseConnection {
  readonly #statements = new Map<string, Database.Statement>();

  constructor(
    private readonly database: Database.Database,
    private readonly cacheSize: number,
  ) {}

  /** How many prepared statements are kept now (for tests). */
  get cachedStatements(): number {
    return this.#statements.size;
  }

  clearCache(): void {
    this.#statements.clear();
  }

  executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    try {
      const statement = this.prepared(compiledQuery.sql);
      const parameters = compiledQuery.parameters;
      if (statement.reader) return Promise.resolve({ rows: statement.all(parameters) as R[] });
      const { changes, lastInsertRowid } = statement.run(parameters);
      return Promise.resolve({ numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] });
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- an async generator is what the interface asks for
  async *streamQuery<R>(compiledQuery: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    const statement = this.prepared(compiledQuery.sql);
    if (!statement.reader) throw new Error('only a statement that returns rows can be streamed');
    for (const row of statement.iterate(compiledQuery.parameters)) yield { rows: [row as R] };
  }

  /** The statement of `sql`, prepared once while it stays among the most recently used. */
  private prepared(sql: string): Database.Statement {
    const cached = this.#statements.get(sql);
    if (cached !== undefined) {
      // Map keeps insertion order: moving a hit to the end makes the first key the least recently used.
      this.#statements.delete(sql);
      this.#statements.set(sql, cached);
      return cached;
    }
    const statement = this.database.prepare(sql);
    if (this.cacheSize > 0) {
      if (this.#statements.size >= this.cacheSize) {
        const oldest = this.#statements.keys().next();
        if (oldest.done !== true) this.#statements.delete(oldest.value);
      }
      this.#statements.set(sql, statement);
    }
    return statement;
  }
}

/** Savepoint names come from Kysely's API (`savepoint('name')`): quoted as identifiers. */
function quoteName(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** One holder at a time, the others waiting in turn. */
class Mutex {
  #held: Promise<void> | undefined;
  #release: (() => void) | undefined;

  async lock(): Promise<void> {
    while (this.#held !== undefined) await this.#held;
    this.#held = new Promise((resolve) => (this.#release = resolve));
  }

  unlock(): void {
    const release = this.#release;
    this.#held = undefined;
    this.#release = undefined;
    release?.();
  }
}
