// Group commit: units of work that arrive in the same turn of the event loop
// share ONE IMMEDIATE transaction, each in a savepoint of its own. Why: under
// load a POST /api/box_logs spends more on its transaction (BEGIN's locks,
// the commit's WAL writes: system calls, slow on a VM) than on its 50
// inserts; several requests parsed in one turn now pay for one.
//
// What does not change:
// - Each unit is all or nothing: a unit that throws is rolled back to its
//   savepoint and its promise rejects with that error; its neighbours go on.
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

interface Unit {
  readonly work: () => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export interface GroupCommitCounters {
  /** Transactions committed (or attempted). */
  groups: number;
  units: number;
}

/** More waiting units than this run at once, without waiting for the turn to end.
 * 500, not 64: each MQTT response message is a unit, and a few hundred arrive
 * in one turn under load (bench:ingest: 0.28 of the bare broker with 500,
 * 0.18 to 0.23 with 64); an HTTP unit is a whole batch. */
export const DEFAULT_MAX_GROUP = 500;

export class GroupCommit {
  readonly counters: GroupCommitCounters = { groups: 0, units: 0 };
  #pending: Unit[] = [];
  #scheduled = false;
  #statements: SavepointStatements | undefined;

  constructor(
    private readonly db: Db,
    private readonly maxGroup = DEFAULT_MAX_GROUP,
  ) {}

  /** Runs `work` (synchronous database work) in a savepoint of the next
   * group's transaction; resolves with its result once that committed. */
  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#pending.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (this.#pending.length >= this.maxGroup) this.flush();
      else if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.flush());
      }
    });
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

  /** Runs and commits what is waiting now. Synchronous; never throws. */
  flush(): void {
    this.#scheduled = false;
    const units = this.#pending;
    if (units.length === 0) return;
    this.#pending = [];
    this.counters.groups += 1;
    this.counters.units += units.length;
    const savepoint = this.#savepoint();
    let outcomes: Outcome[];
    try {
      outcomes = this.db
        .transaction(() =>
          units.map((unit): Outcome => {
            // A savepoint of its own, rolled back if work throws; statements
            // prepared once (db.transaction(work) builds its wrappers anew
            // for every unit, and each MQTT message is a unit).
            savepoint.begin.run();
            try {
              const value = unit.work();
              savepoint.release.run();
              return { ok: true, value };
            } catch (error) {
              // Some errors (a full disk, I/O) make SQLite roll back the whole
              // transaction: then the group is lost, and every unit rejects.
              if (!this.db.inTransaction) throw error;
              savepoint.rollback.run();
              savepoint.release.run();
              return { ok: false, error };
            }
          }),
        )
        // IMMEDIATE: the write lock at BEGIN, so a second API process waits
        // (busy_timeout) instead of failing to upgrade a read transaction.
        .immediate();
    } catch (error) {
      for (const unit of units) unit.reject(error);
      return;
    }
    units.forEach((unit, index) => {
      const outcome = outcomes[index];
      if (outcome?.ok) unit.resolve(outcome.value);
      else unit.reject(outcome?.error);
    });
  }
}
