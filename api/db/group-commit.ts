// Group commit: units of work that arrive in the same turn of the event loop
// share ONE transaction. Why: under load a POST /api/box_logs spends more on
// its transaction (BEGIN's locks, the commit's WAL writes: system calls, slow
// on a VM) than on its 50 inserts; several requests parsed in one turn pay
// for one.
//
// Two kinds of unit, one path: work of its own (`run`: all or nothing), and
// an input of a shared work (`runShared`: an MQTT response message, an HTTP
// batch of box logs, api/box-logs/http-batches.ts), whose inputs of one
// group are answered by one call, the per-input work of a batch paid once.
// Only when that call fails does each of its inputs run again alone, to
// find the one that fails: that one rejects, the others are kept
// (group-commit-units.ts, the same fallback on both engines). A unit is an
// async function of the `Executor` it runs its queries on: the same units
// on both engines.
//
// This file forms the groups; how a group's transactions run is the
// engine's, which the store gives (docs/decisions/store-sqlite-and-postgresql.md, "The
// ingestion core"): group-commit-sqlite.ts (one IMMEDIATE transaction a
// group, a savepoint a unit, groups one after another),
// group-commit-postgres.ts (a transaction per work of its own, one per
// shared work, at most two of one shared work at once, concurrently).
//
// What holds on both engines:
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
// Each group starts a turn of its own, past the group limit too.
import type { Store } from './store.js';
import type { GroupCommitEngine, GroupCommitTally, SharedWork, Unit, UnitWork } from './group-commit-units.js';

export type { SharedWork, UnitWork } from './group-commit-units.js';

export interface GroupCommitCounters {
  /** Transactions committed (or attempted). */
  groups: number;
  units: number;
}

/** At most this many units a group; more waiting ones go in the next group(s), each on a turn of its own.
 * 500: each MQTT response message is a unit, and a few hundred arrive in one
 * turn under load; an HTTP unit is a whole batch
 * (http-batches.ts caps the logs of one insert). */
export const DEFAULT_MAX_GROUP = 500;

export class GroupCommit {
  readonly #tally: GroupCommitTally = {
    counters: { groups: 0, units: 0 },
    ranAlone: 0,
    raceRetries: 0,
    afterCommitFailures: 0,
  };
  readonly #engine: GroupCommitEngine;
  readonly #maxGroup: number;
  #pending: Unit[] = [];
  #scheduled = false;
  /** Groups not settled yet (flush waits for them). */
  readonly #inFlight = new Set<Promise<void>>();

  constructor(store: Store, maxGroup = DEFAULT_MAX_GROUP) {
    this.#maxGroup = maxGroup;
    this.#engine = store.groupCommitEngine({ tally: this.#tally, maxGroup });
  }

  get counters(): GroupCommitCounters {
    return this.#tally.counters;
  }

  /** Inputs of a shared work run again alone because their shared run failed. */
  get ranAlone(): number {
    return this.#tally.ranAlone;
  }

  /** PostgreSQL: transactions run again after losing a race (a deadlock, a serialization failure). */
  get raceRetries(): number {
    return this.#tally.raceRetries;
  }

  /** afterCommit callbacks that threw (counted; the units settle anyway). */
  get afterCommitFailures(): number {
    return this.#tally.afterCommitFailures;
  }

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
        shared,
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
    const callbacks = this.#engine.callbacksOfCurrentUnit();
    if (callbacks === undefined) return false;
    callbacks.push(callback);
    return true;
  }

  /** Resolves once every unit given so far is settled (what waits runs on the next turns). Never rejects. */
  async flush(): Promise<void> {
    while (this.#pending.length > 0 || this.#inFlight.size > 0) {
      if (this.#pending.length > 0) this.#schedule();
      await Promise.all([...this.#inFlight, new Promise((resolve) => setImmediate(resolve))]);
    }
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
    // A group still running that the next must not overlap (SQLite: a unit that awaited more than its queries).
    if (this.#engine.busy) {
      this.#schedule();
      return;
    }
    const units = this.#pending.splice(0, this.#maxGroup);
    if (this.#pending.length > 0) this.#schedule();
    this.#tally.counters.units += units.length;
    const group = this.#engine.runGroup(units);
    this.#inFlight.add(group);
    void group.finally(() => this.#inFlight.delete(group));
  }
}
