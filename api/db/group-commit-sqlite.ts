// The group commit on SQLite: one `BEGIN IMMEDIATE` per group, a savepoint
// per unit (statements prepared once). The units' queries are prepared
// better-sqlite3 statements (api/box-logs/ingest-store-sqlite.ts) whose
// awaits resolve at once, so a group completes within one macrotask: each
// group starts a macrotask of its own (the group commit's setImmediate), so
// no other code's microtasks run while its transaction is open, and it holds
// Kysely's connection, so no other Kysely query enters it
// (test/api/box-logs/ingest-store.test.ts asserts it). Groups never overlap: the
// next waits while one runs (`busy`). Every unit settles after the COMMIT;
// if BEGIN or COMMIT fails, every unit of the group rejects with that error.
// afterCommit finds its unit as the one running (units run one after
// another), without AsyncLocalStorage, whose promise hooks would cost every
// promise of the process.
import type { Kysely } from 'kysely';
import type { Statement } from 'better-sqlite3';
import type { Executor } from './executor.js';
import {
  outcomeOf,
  runCallbacks,
  settleAll,
  sharesOf,
  togetherThenAlone,
  type Callbacks,
  type GroupCommitEngine,
  type GroupCommitEngineOptions,
  type Outcome,
  type Unit,
  type UnitWork,
} from './group-commit-units.js';
import type { Db } from './open.js';
import type { Schema } from './schema.js';

interface SavepointStatements {
  readonly begin: Statement;
  readonly commit: Statement;
  readonly rollbackAll: Statement;
  readonly savepoint: Statement;
  readonly release: Statement;
  readonly rollback: Statement;
}

export class SqliteGroupCommit implements GroupCommitEngine {
  #running = false;
  #statements: SavepointStatements | undefined;
  /** The callbacks of the unit running now. */
  #current: Callbacks | undefined;

  constructor(
    private readonly kysely: Kysely<Schema>,
    private readonly db: Db,
    private readonly options: GroupCommitEngineOptions,
  ) {}

  get busy(): boolean {
    return this.#running;
  }

  callbacksOfCurrentUnit(): Callbacks | undefined {
    return this.#current;
  }

  async runGroup(units: readonly Unit[]): Promise<void> {
    this.#running = true;
    try {
      // Kysely's connection held for the group: a Kysely query of other code
      // waits for the COMMIT instead of running inside this transaction.
      await this.kysely.connection().execute((on) => this.#transaction(on, units));
    } catch (error) {
      for (const unit of units) unit.reject(error);
    } finally {
      this.#running = false;
    }
  }

  /** Prepared at the first group, once: db.transaction(work) builds its wrappers anew at every call. */
  #prepared(): SavepointStatements {
    const db = this.db;
    this.#statements ??= {
      begin: db.prepare('BEGIN IMMEDIATE'),
      commit: db.prepare('COMMIT'),
      rollbackAll: db.prepare('ROLLBACK'),
      savepoint: db.prepare('SAVEPOINT group_commit_unit'),
      release: db.prepare('RELEASE group_commit_unit'),
      rollback: db.prepare('ROLLBACK TO group_commit_unit'),
    };
    return this.#statements;
  }

  async #transaction(on: Executor, units: readonly Unit[]): Promise<void> {
    const statements = this.#prepared();
    this.options.tally.counters.groups += 1;
    const committed: Callbacks = [];
    let outcomes: Outcome[];
    try {
      // IMMEDIATE: the write lock at BEGIN, so a second API process waits
      // (busy_timeout) instead of failing to upgrade a read transaction.
      statements.begin.run();
      try {
        outcomes = await this.#runUnits(units, (work) => this.#inSavepoint(statements, on, work, committed));
        statements.commit.run();
      } catch (error) {
        if (this.db.inTransaction) statements.rollbackAll.run();
        throw error;
      }
    } catch (error) {
      for (const unit of units) unit.reject(error);
      return;
    }
    runCallbacks(committed, this.options.tally);
    settleAll(units, outcomes);
  }

  /**
   * Every unit's outcome, in order, each run by `attempt` (a savepoint); a
   * shared work runs where its first input is (together, then each alone).
   */
  async #runUnits(units: readonly Unit[], attempt: (work: UnitWork<unknown>) => Promise<Outcome>): Promise<Outcome[]> {
    const shares = sharesOf(units);
    const outcomes: Outcome[] = new Array<Outcome>(units.length);
    for (const [index, unit] of units.entries()) {
      if (!('shared' in unit)) {
        outcomes[index] = await attempt(unit.work);
        continue;
      }
      const indexes = shares.get(unit.shared);
      if (indexes?.[0] !== index) continue; // ran with its first input
      const inputs = indexes.map((at) => (units[at] as { input: unknown }).input);
      await togetherThenAlone(unit.shared, inputs, attempt, this.options.tally, (i, outcome) => {
        outcomes[indexes[i] as number] = outcome;
      });
    }
    return outcomes;
  }

  /** Runs `work` in a savepoint of its own, rolled back if it throws. */
  async #inSavepoint(
    statements: SavepointStatements,
    on: Executor,
    work: UnitWork<unknown>,
    committed: Callbacks,
  ): Promise<Outcome> {
    statements.savepoint.run();
    // Units run one after another: the one running is the current one.
    const ownCallbacks: Callbacks = [];
    this.#current = ownCallbacks;
    const { outcome, callbacks } = await outcomeOf(async () => {
      try {
        return await work(on);
      } finally {
        this.#current = undefined;
      }
    }, ownCallbacks);
    if (outcome.ok) {
      statements.release.run();
      committed.push(...callbacks);
      return outcome;
    }
    // Some errors (a full disk, I/O) make SQLite roll back the whole
    // transaction: then the group is lost, and every unit rejects.
    if (!this.db.inTransaction) throw outcome.error;
    statements.rollback.run();
    statements.release.run();
    return outcome;
  }
}
