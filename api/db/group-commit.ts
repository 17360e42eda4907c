// Group commit: units of work that arrive in the same turn of the event loop
// share ONE IMMEDIATE transaction, each in a savepoint of its own. Why: under
// load a POST /api/box_logs spends more on its transaction (BEGIN's locks,
// the commit's WAL writes: system calls, slow on a VM) than on its 50
// inserts; several requests parsed in one turn now pay for one.
//
// Two kinds of unit, one path: work of its own (`run`: an HTTP batch of box
// logs, all or nothing), and an input of a shared work (`runShared`: an MQTT
// response message), whose inputs of one group are answered by one call in
// one savepoint, the per-input work of a batch paid once. Only when that
// call fails does each of its inputs run again alone, in a savepoint of its
// own, to find the one that fails: that one rejects, the others are kept.
//
// What does not change:
// - Each unit is all or nothing: a unit that throws is rolled back to its
//   savepoint and its promise rejects with that error; its neighbours go on
//   (an input of a shared work: once run again alone).
// - Durability: every promise settles after the COMMIT (or its failure), so
//   a 201 is never sent for a batch that is not on disk.
// - If BEGIN or COMMIT fails, nothing of the group is written and every unit
//   rejects with that error.
// No timer: a lone unit runs on the next turn of the loop (setImmediate).
import type { Statement } from 'better-sqlite3';
import type { Db } from './open.js';

interface SavepointStatements {
  readonly begin: Statement;
  readonly release: Statement;
  readonly rollback: Statement;
}

/**
 * Work that the units of one group share: many inputs answered by one call
 * (the MQTT response messages of a turn stored by one ingestBoxLogs call:
 * boxes, parkings and keys read once, the responses of a box verified
 * together, one box observation each). `runAll` answers each input, in
 * order. If it throws, what it wrote is rolled back and each input is run
 * again alone (`runAll([input])`) in a savepoint of its own, so only the
 * input that fails is lost.
 */
export interface SharedWork<I, R> {
  runAll(inputs: readonly I[]): readonly R[];
}

interface Settle {
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** A unit is work of its own (an HTTP batch) or an input of a shared work (an MQTT message). */
type Unit = Settle &
  ({ readonly work: () => unknown } | { readonly shared: SharedWork<unknown, unknown>; readonly input: unknown });

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export interface GroupCommitCounters {
  /** Transactions committed (or attempted). */
  groups: number;
  units: number;
}

/** More waiting units than this run at once, without waiting for the turn to end.
 * 500, as the MQTT batcher it replaced: each MQTT response message is a unit,
 * and a few hundred arrive in one turn under load; an HTTP unit is a whole batch. */
export const DEFAULT_MAX_GROUP = 500;

export class GroupCommit {
  readonly counters: GroupCommitCounters = { groups: 0, units: 0 };
  /** Inputs of a shared work run again alone because their shared run failed. */
  ranAlone = 0;
  /** afterCommit callbacks that threw (counted; the units settle anyway). */
  afterCommitFailures = 0;
  #pending: Unit[] = [];
  #scheduled = false;
  #statements: SavepointStatements | undefined;
  /** Callbacks of the unit running now (undefined outside a unit). */
  #unitCallbacks: (() => void)[] | undefined;
  /** Callbacks of the units of this group that were kept, run after its COMMIT. */
  #committed: (() => void)[] = [];

  constructor(
    private readonly db: Db,
    private readonly maxGroup = DEFAULT_MAX_GROUP,
  ) {}

  /** Runs `work` (synchronous database work) in a savepoint of the next
   * group's transaction; resolves with its result once that committed. */
  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#enqueue({ work, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  /** Hands `input` to `shared.runAll` with the other inputs of the same
   * shared work in the next group; resolves with its answer once committed. */
  runShared<I, R>(shared: SharedWork<I, R>, input: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#enqueue({ shared, input, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  /** Inside a unit: runs `callback` once the group's transaction has
   * committed, never if the unit is rolled back (an input of a shared work
   * run again alone registers anew). Returns false outside a unit: the
   * caller is not in a group, and does it now. */
  afterCommit(callback: () => void): boolean {
    if (this.#unitCallbacks === undefined) return false;
    this.#unitCallbacks.push(callback);
    return true;
  }

  #enqueue(unit: Unit): void {
    this.#pending.push(unit);
    if (this.#pending.length >= this.maxGroup) this.flush();
    else if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** Prepared at the first group, once. */
  #savepoint(): SavepointStatements {
    this.#statements ??= {
      begin: this.db.prepare('SAVEPOINT group_commit_unit'),
      release: this.db.prepare('RELEASE group_commit_unit'),
      rollback: this.db.prepare('ROLLBACK TO group_commit_unit'),
    };
    return this.#statements;
  }

  /** Runs `work` in a savepoint of its own, rolled back if it throws.
   * Statements prepared once: db.transaction(work) builds its wrappers anew
   * at every call. */
  #inSavepoint(work: () => unknown): Outcome {
    const savepoint = this.#savepoint();
    savepoint.begin.run();
    const callbacks: (() => void)[] = [];
    this.#unitCallbacks = callbacks;
    try {
      const value = work();
      savepoint.release.run();
      this.#committed.push(...callbacks);
      return { ok: true, value };
    } catch (error) {
      // Some errors (a full disk, I/O) make SQLite roll back the whole
      // transaction: then the group is lost, and every unit rejects.
      if (!this.db.inTransaction) throw error;
      savepoint.rollback.run();
      savepoint.release.run();
      return { ok: false, error };
    } finally {
      this.#unitCallbacks = undefined;
    }
  }

  /** The inputs of one shared work, together; if that fails, each alone. */
  #runShared(shared: SharedWork<unknown, unknown>, inputs: readonly unknown[]): Outcome[] {
    const answers = (of: readonly unknown[]) => () => {
      const values = shared.runAll(of);
      if (values.length !== of.length) throw new Error(`shared work answered ${values.length} of ${of.length} inputs`);
      return values;
    };
    const together = this.#inSavepoint(answers(inputs));
    if (together.ok) return (together.value as unknown[]).map((value) => ({ ok: true, value }));
    if (inputs.length === 1) return [together];
    this.ranAlone += inputs.length;
    return inputs.map((input): Outcome => {
      const alone = this.#inSavepoint(answers([input]));
      return alone.ok ? { ok: true, value: (alone.value as unknown[])[0] } : alone;
    });
  }

  /** Every unit's outcome, in order; a shared work runs where its first input is. */
  #runAll(units: readonly Unit[]): Outcome[] {
    const shares = new Map<SharedWork<unknown, unknown>, number[]>();
    units.forEach((unit, index) => {
      if (!('shared' in unit)) return;
      const indexes = shares.get(unit.shared);
      if (indexes === undefined) shares.set(unit.shared, [index]);
      else indexes.push(index);
    });
    const outcomes: Outcome[] = new Array<Outcome>(units.length);
    units.forEach((unit, index) => {
      if (!('shared' in unit)) {
        outcomes[index] = this.#inSavepoint(unit.work);
        return;
      }
      const indexes = shares.get(unit.shared);
      if (indexes?.[0] !== index) return; // ran with its first input
      const answers = this.#runShared(
        unit.shared,
        indexes.map((at) => (units[at] as { input: unknown }).input),
      );
      indexes.forEach((at, i) => (outcomes[at] = answers[i] as Outcome));
    });
    return outcomes;
  }

  /** Runs and commits what is waiting now. Synchronous; never throws. */
  flush(): void {
    this.#scheduled = false;
    const units = this.#pending;
    if (units.length === 0) return;
    this.#pending = [];
    this.counters.groups += 1;
    this.counters.units += units.length;
    let outcomes: Outcome[];
    this.#committed = [];
    try {
      // IMMEDIATE: the write lock at BEGIN, so a second API process waits
      // (busy_timeout) instead of failing to upgrade a read transaction.
      outcomes = this.db.transaction(() => this.#runAll(units)).immediate();
    } catch (error) {
      this.#committed = [];
      for (const unit of units) unit.reject(error);
      return;
    }
    const committed = this.#committed;
    this.#committed = [];
    for (const callback of committed) {
      // Event publishing (api/events/): cheap, and never allowed to keep a
      // unit from settling; a failure is counted, not thrown.
      try {
        callback();
      } catch {
        this.afterCommitFailures += 1;
      }
    }
    units.forEach((unit, index) => {
      const outcome = outcomes[index];
      if (outcome?.ok) unit.resolve(outcome.value);
      else unit.reject(outcome?.error);
    });
  }
}
