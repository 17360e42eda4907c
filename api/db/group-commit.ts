// Group commit: units of work that arrive in the same turn of the event loop
// share ONE transaction. Why: under load a POST /api/box_logs spends more on
// its transaction (BEGIN's locks, the commit's WAL writes: system calls, slow
// on a VM) than on its 50 inserts; several requests parsed in one turn now
// pay for one.
//
// Two kinds of unit, one path: work of its own (`run`: all or nothing), and
// an input of a shared work (`runShared`: an MQTT response message, an HTTP
// batch of box logs, api/box-logs/http-batches.ts), whose inputs of one
// group are answered by one call, the per-input work of a batch paid once.
// Only when that call fails does each of its inputs run again alone, to
// find the one that fails: that one rejects, the others are kept. A unit is
// an async function of the `Executor` it runs its queries on (issue 18: the
// same units on both engines).
//
// Per engine (docs/decisions/store-sqlite-and-postgresql.md, "The ingestion core"):
// - SQLite: one `BEGIN IMMEDIATE` per turn, a savepoint per unit (statements
//   prepared once). The units' queries are prepared better-sqlite3
//   statements (api/box-logs/ingest-store-sqlite.ts) whose awaits resolve at
//   once, so a group completes within one macrotask: each group starts a
//   macrotask of its own (setImmediate, also past the group limit), so no
//   other code's microtasks run while its transaction is open, and it holds
//   Kysely's connection, so no other Kysely query enters it
//   (test/api/box-logs-store.test.ts asserts it). Groups never overlap.
// - PostgreSQL: a savepoint is a round trip, so none on the path that
//   succeeds. The inputs of a shared work are one transaction on one pooled
//   connection (the MQTT messages of a turn: one bulk insert; the HTTP
//   batches of a turn: another); each work of its own is a transaction of
//   its own. They run concurrently, and the groups of the next turns with
//   them (the pool gives the concurrency). A shared work that fails is
//   rolled back whole, then each of its inputs runs alone in a transaction
//   of its own.
//
// What does not change:
// - Each unit is all or nothing: a unit that throws is rolled back and its
//   promise rejects with that error; its neighbours go on (an input of a
//   shared work: once run again alone).
// - Durability: every promise settles after the COMMIT (or its failure), so
//   a 201 or a PUBACK is never sent for what is not committed.
// - If BEGIN or COMMIT fails, nothing of the transaction is written and every
//   unit in it rejects with that error.
// - afterCommit callbacks of a unit run after its transaction committed,
//   never if it was rolled back.
// No timer: a lone unit runs on the next turn of the loop (setImmediate).
// afterCommit finds its unit: on SQLite the one running (units run one after
// another); on PostgreSQL, where units run at once, through an
// AsyncLocalStorage, never started on SQLite (its promise hooks would cost
// every promise of the process).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Statement } from 'better-sqlite3';
import type { Db } from './open.js';
import type { Executor, PostgresStore, SqliteStore, Store } from './store.js';
import { isLostRace, retryingLostRaces } from './lost-race.js';

interface SavepointStatements {
  readonly begin: Statement;
  readonly commit: Statement;
  readonly rollbackAll: Statement;
  readonly savepoint: Statement;
  readonly release: Statement;
  readonly rollback: Statement;
}

/** A unit of its own: its queries on `on` (the group's transaction). */
export type UnitWork<T> = (on: Executor) => T | Promise<T>;

/**
 * Work that the units of one group share: many inputs answered by one call
 * (the MQTT response messages of a turn stored by one ingestBoxLogs call:
 * boxes, parkings and keys read once, the responses of a box verified
 * together, one bulk insert). `runAll` answers each input, in order, its
 * queries on `on`. If it throws, what it wrote is rolled back and each input
 * is run again alone (`runAll(on, [input])`), so only the input that fails is
 * lost.
 */
export interface SharedWork<I, R> {
  runAll(on: Executor, inputs: readonly I[]): readonly R[] | Promise<readonly R[]>;
}

interface Settle {
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** A unit is work of its own or an input of a shared work (an MQTT message, an HTTP batch). */
type Unit = Settle &
  ({ readonly work: UnitWork<unknown> } | { readonly shared: SharedWork<unknown, unknown>; readonly input: unknown });

type SharedUnit = Unit & { readonly shared: SharedWork<unknown, unknown>; readonly input: unknown };

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export interface GroupCommitCounters {
  /** Transactions committed (or attempted). */
  groups: number;
  units: number;
}

/** At most this many units a group; more waiting ones go in the next group(s), each on a turn of its own.
 * 500, as the MQTT batcher it replaced: each MQTT response message is a unit,
 * and a few hundred arrive in one turn under load; an HTTP unit is a whole batch
 * (http-batches.ts caps the logs of one insert). */
export const DEFAULT_MAX_GROUP = 500;

/**
 * PostgreSQL: at most this many transactions of one shared work at once.
 * Two, not one: while one waits for PostgreSQL (its insert, its COMMIT), the
 * next reads its rows and verifies its responses, then waits for the rows
 * the first holds; not more, as each one more splits the waiting inputs
 * into smaller groups that queue on the same row locks (docs/benchmarks.md:
 * one 17,900 to 20,000 logs/s over HTTP, two 16,700 to 25,400, on a noisy
 * machine).
 */
const SHARED_IN_FLIGHT = 2;

export class GroupCommit {
  readonly counters: GroupCommitCounters = { groups: 0, units: 0 };
  /** Inputs of a shared work run again alone because their shared run failed. */
  ranAlone = 0;
  /** PostgreSQL: transactions run again after losing a race (a deadlock, a serialization failure). */
  raceRetries = 0;
  /** afterCommit callbacks that threw (counted; the units settle anyway). */
  afterCommitFailures = 0;
  #pending: Unit[] = [];
  #scheduled = false;
  #statements: SavepointStatements | undefined;
  /** SQLite: the callbacks of the unit running now. */
  #current: (() => void)[] | undefined;
  /** PostgreSQL: the callbacks of the unit, wherever its awaits take it. */
  readonly #unitCallbacks = new AsyncLocalStorage<(() => void)[]>();
  /** PostgreSQL: the inputs waiting for the transaction of their shared work running now. */
  readonly #sharedQueues = new Map<SharedWork<unknown, unknown>, { waiting: SharedUnit[]; running: number }>();
  /** SQLite: a group is running (the next turn waits for it). */
  #sqliteRunning = false;
  /** Groups not settled yet (flush waits for them). */
  readonly #inFlight = new Set<Promise<void>>();

  constructor(
    private readonly store: Store,
    private readonly maxGroup = DEFAULT_MAX_GROUP,
  ) {}

  /** Runs `work` in the next group's transaction (SQLite: in a savepoint of
   * its own); resolves with its result once that committed. */
  run<T>(work: UnitWork<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#enqueue({ work, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  /** Hands `input` to `shared.runAll` with the other inputs of the same
   * shared work in the next group; resolves with its answer once committed. */
  runShared<I, R>(shared: SharedWork<I, R>, input: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#enqueue({
        shared: shared,
        input,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
    });
  }

  /** Inside a unit: runs `callback` once the unit's transaction has
   * committed, never if the unit is rolled back (an input of a shared work
   * run again alone registers anew). Returns false outside a unit: the
   * caller is not in a group, and does it now. */
  afterCommit(callback: () => void): boolean {
    const callbacks = this.store.dialect === 'sqlite' ? this.#current : this.#unitCallbacks.getStore();
    if (callbacks === undefined) return false;
    callbacks.push(callback);
    return true;
  }

  #enqueue(unit: Unit): void {
    this.#pending.push(unit);
    this.#schedule();
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => this.#turn());
  }

  /** A turn of the loop: the next group (at most maxGroup units) starts; what waits beyond it gets a turn of its own. */
  #turn(): void {
    this.#scheduled = false;
    if (this.#pending.length === 0) return;
    // SQLite: a group still running (a unit that awaited more than its queries) is not overlapped.
    if (this.store.dialect === 'sqlite' && this.#sqliteRunning) {
      this.#schedule();
      return;
    }
    const units = this.#pending.splice(0, this.maxGroup);
    if (this.#pending.length > 0) this.#schedule();
    this.counters.units += units.length;
    const group =
      this.store.dialect === 'sqlite' ? this.#sqliteRun(this.store, units) : this.#postgresGroup(this.store, units);
    this.#inFlight.add(group);
    void group.finally(() => this.#inFlight.delete(group));
  }

  /** Resolves once every unit given so far is settled (what waits runs on the next turns). Never rejects. */
  async flush(): Promise<void> {
    while (this.#pending.length > 0 || this.#inFlight.size > 0) {
      if (this.#pending.length > 0) this.#schedule();
      await Promise.all([...this.#inFlight, new Promise((resolve) => setImmediate(resolve))]);
    }
  }

  /** Runs `work` with its own afterCommit list; the list is kept only if it succeeds. */
  async #withCallbacks(work: () => unknown): Promise<{ outcome: Outcome; callbacks: (() => void)[] }> {
    const callbacks: (() => void)[] = [];
    try {
      let value: unknown;
      if (this.store.dialect === 'sqlite') {
        // Units run one after another on SQLite: the one running is the current one.
        this.#current = callbacks;
        try {
          value = await work();
        } finally {
          this.#current = undefined;
        }
      } else value = await this.#unitCallbacks.run(callbacks, work);
      return { outcome: { ok: true, value }, callbacks };
    } catch (error) {
      return { outcome: { ok: false, error }, callbacks: [] };
    }
  }

  #runCallbacks(callbacks: readonly (() => void)[]): void {
    for (const callback of callbacks) {
      // Event publishing (api/events/): cheap, and never allowed to keep a
      // unit from settling; a failure is counted, not thrown.
      try {
        callback();
      } catch {
        this.afterCommitFailures += 1;
      }
    }
  }

  // ---- SQLite: one IMMEDIATE transaction a group, a savepoint a unit ----

  /** Prepared at the first group, once: db.transaction(work) builds its wrappers anew at every call. */
  #sqliteStatements(db: Db): SavepointStatements {
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

  async #sqliteRun(store: SqliteStore, units: readonly Unit[]): Promise<void> {
    this.#sqliteRunning = true;
    try {
      // Kysely's connection held for the group: a Kysely query of other code
      // waits for the COMMIT instead of running inside this transaction.
      await store.kysely.connection().execute((on) => this.#sqliteTransaction(store.sqlite, on, units));
    } catch (error) {
      for (const unit of units) unit.reject(error);
    } finally {
      this.#sqliteRunning = false;
    }
  }

  async #sqliteTransaction(db: Db, on: Executor, units: readonly Unit[]): Promise<void> {
    const statements = this.#sqliteStatements(db);
    this.counters.groups += 1;
    const committed: (() => void)[] = [];
    let outcomes: Outcome[];
    try {
      // IMMEDIATE: the write lock at BEGIN, so a second API process waits
      // (busy_timeout) instead of failing to upgrade a read transaction.
      statements.begin.run();
      try {
        outcomes = await this.#runUnits(units, (work) => this.#inSavepoint(db, statements, on, work, committed));
        statements.commit.run();
      } catch (error) {
        if (db.inTransaction) statements.rollbackAll.run();
        throw error;
      }
    } catch (error) {
      for (const unit of units) unit.reject(error);
      return;
    }
    this.#runCallbacks(committed);
    settleAll(units, outcomes);
  }

  /** Runs `work` in a savepoint of its own, rolled back if it throws. */
  async #inSavepoint(
    db: Db,
    statements: SavepointStatements,
    on: Executor,
    work: UnitWork<unknown>,
    committed: (() => void)[],
  ): Promise<Outcome> {
    statements.savepoint.run();
    const { outcome, callbacks } = await this.#withCallbacks(() => work(on));
    if (outcome.ok) {
      statements.release.run();
      committed.push(...callbacks);
      return outcome;
    }
    // Some errors (a full disk, I/O) make SQLite roll back the whole
    // transaction: then the group is lost, and every unit rejects.
    if (!db.inTransaction) throw outcome.error;
    statements.rollback.run();
    statements.release.run();
    return outcome;
  }

  /**
   * Every unit's outcome, in order, each run by `attempt` (a savepoint); a
   * shared work runs where its first input is, its inputs together, and if
   * that fails each alone.
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
      const together = await attempt(answers(unit.shared, inputs));
      let answered: Outcome[];
      if (together.ok) answered = (together.value as unknown[]).map((value) => ({ ok: true, value }));
      else if (inputs.length === 1) answered = [together];
      else {
        this.ranAlone += inputs.length;
        answered = [];
        for (const input of inputs) {
          const alone = await attempt(answers(unit.shared, [input]));
          answered.push(alone.ok ? { ok: true, value: (alone.value as unknown[])[0] } : alone);
        }
      }
      indexes.forEach((at, i) => (outcomes[at] = answered[i] as Outcome));
    }
    return outcomes;
  }

  // ---- PostgreSQL: a transaction per work of its own, one per shared work ----

  async #postgresGroup(store: PostgresStore, units: readonly Unit[]): Promise<void> {
    const shares = sharesOf(units);
    const runs: Promise<void>[] = [];
    for (const [index, unit] of units.entries()) {
      if (!('shared' in unit)) {
        runs.push(this.#postgresTransaction(store, unit.work).then((outcome) => settleAll([unit], [outcome])));
        continue;
      }
      const indexes = shares.get(unit.shared);
      if (indexes?.[0] !== index) continue;
      runs.push(
        this.#postgresShared(
          store,
          unit.shared,
          indexes.map((at) => units[at] as SharedUnit),
        ),
      );
    }
    await Promise.all(runs);
  }

  /**
   * The inputs join their shared work's queue; if fewer than
   * SHARED_IN_FLIGHT transactions of that work are running, one more starts
   * and, until the queue is empty, takes what waits (at most maxGroup inputs
   * a transaction). So the inputs that arrive while its transactions run
   * gather for the next. Why: the inputs of one shared work touch the same
   * rows (the box and session of the logs of one box), so a transaction a
   * turn would wait on the others' row locks until their COMMIT, one after
   * the other, each for a turn's few inputs (one HTTP batch: 9,600 logs/s);
   * gathered, the wait is paid once for all of them.
   */
  async #postgresShared(
    store: PostgresStore,
    shared: SharedWork<unknown, unknown>,
    units: readonly SharedUnit[],
  ): Promise<void> {
    let queue = this.#sharedQueues.get(shared);
    if (queue === undefined) {
      queue = { waiting: [], running: 0 };
      this.#sharedQueues.set(shared, queue);
    }
    queue.waiting.push(...units);
    if (queue.running >= SHARED_IN_FLIGHT) return;
    queue.running += 1;
    try {
      while (queue.waiting.length > 0)
        await this.#postgresSharedOnce(store, shared, queue.waiting.splice(0, this.maxGroup));
    } finally {
      queue.running -= 1;
      if (queue.running === 0) this.#sharedQueues.delete(shared);
    }
  }

  async #postgresSharedOnce(
    store: PostgresStore,
    shared: SharedWork<unknown, unknown>,
    units: readonly SharedUnit[],
  ): Promise<void> {
    const inputs = units.map((unit) => unit.input);
    const together = await this.#postgresTransaction(store, answers(shared, inputs));
    if (together.ok || units.length === 1) {
      settleAll(
        units,
        together.ok ? (together.value as unknown[]).map((value): Outcome => ({ ok: true, value })) : [together],
      );
      return;
    }
    this.ranAlone += units.length;
    for (const unit of units) {
      const alone = await this.#postgresTransaction(store, answers(shared, [unit.input]));
      settleAll([unit], [alone.ok ? { ok: true, value: (alone.value as unknown[])[0] } : alone]);
    }
  }

  /** `work` in a transaction of its own, run again when it lost a race
   * (lost-race.ts); its callbacks run after the COMMIT. */
  async #postgresTransaction(store: PostgresStore, work: UnitWork<unknown>): Promise<Outcome> {
    let callbacks: (() => void)[] = [];
    let outcome: Outcome;
    try {
      outcome = await retryingLostRaces(
        () => {
          this.counters.groups += 1;
          return store.kysely.transaction().execute(async (trx) => {
            const ran = await this.#withCallbacks(() => work(trx));
            // Thrown to roll back; answered below (a lost race as itself, to be run again).
            if (!ran.outcome.ok)
              throw isLostRace(ran.outcome.error) ? ran.outcome.error : new RolledBack(ran.outcome.error);
            callbacks = ran.callbacks;
            return ran.outcome;
          });
        },
        () => (this.raceRetries += 1),
      );
    } catch (error) {
      return { ok: false, error: error instanceof RolledBack ? error.cause : error };
    }
    this.#runCallbacks(callbacks);
    return outcome;
  }
}

/** A unit's own error, carried through the transaction's rollback. */
class RolledBack extends Error {
  constructor(override readonly cause: unknown) {
    super('unit rolled back');
  }
}

/** The indexes of each shared work's inputs, in order. */
function sharesOf(units: readonly Unit[]): Map<SharedWork<unknown, unknown>, number[]> {
  const shares = new Map<SharedWork<unknown, unknown>, number[]>();
  units.forEach((unit, index) => {
    if (!('shared' in unit)) return;
    const indexes = shares.get(unit.shared);
    if (indexes === undefined) shares.set(unit.shared, [index]);
    else indexes.push(index);
  });
  return shares;
}

/** The shared work over `inputs`, checked to answer each. */
function answers(shared: SharedWork<unknown, unknown>, inputs: readonly unknown[]) {
  return async (on: Executor): Promise<unknown[]> => {
    const values = await shared.runAll(on, inputs);
    if (values.length !== inputs.length)
      throw new Error(`shared work answered ${values.length} of ${inputs.length} inputs`);
    return [...values];
  };
}

function settleAll(units: readonly Settle[], outcomes: readonly Outcome[]): void {
  units.forEach((unit, index) => {
    const outcome = outcomes[index];
    if (outcome?.ok) unit.resolve(outcome.value);
    else unit.reject(outcome?.error);
  });
}
