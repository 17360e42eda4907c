// The group commit on PostgreSQL: a savepoint is a round trip, so none on
// the path that succeeds. The inputs of a shared work are one transaction
// on one pooled connection (the MQTT messages of a turn: one bulk insert;
// the HTTP batches of a turn: another); each work of its own is a
// transaction of its own. They run concurrently, and the groups of the next
// turns with them (the pool gives the concurrency). A shared work that
// fails is rolled back whole, then each of its inputs runs alone in a
// transaction of its own. A transaction that loses a race (lost-race.ts)
// runs again. Each unit settles after its own transaction's COMMIT (or its
// failure). afterCommit finds its unit, wherever its awaits take it,
// through an AsyncLocalStorage.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Kysely } from 'kysely';
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
  type SharedUnit,
  type SharedWork,
  type Unit,
  type UnitWork,
} from './group-commit-units.js';
import { isLostRace, retryingLostRaces } from './lost-race.js';
import type { Schema } from './schema.js';

/**
 * At most this many transactions of one shared work at once.
 * Two, not one: while one waits for PostgreSQL (its insert, its COMMIT), the
 * next reads its rows and verifies its responses, then waits for the rows
 * the first holds; not more, as each one more splits the waiting inputs
 * into smaller groups that queue on the same row locks (docs/benchmarks.md:
 * one 17,900 to 20,000 logs/s over HTTP, two 16,700 to 25,400, on a noisy
 * machine).
 */
const SHARED_IN_FLIGHT = 2;

export class PostgresGroupCommit implements GroupCommitEngine {
  /** Groups overlap: the pool gives the concurrency. */
  readonly busy = false;
  /** The callbacks of the unit, wherever its awaits take it. */
  readonly #unitCallbacks = new AsyncLocalStorage<Callbacks>();
  /** The inputs waiting for the transaction of their shared work running now. */
  readonly #sharedQueues = new Map<SharedWork<unknown, unknown>, { waiting: SharedUnit[]; running: number }>();

  constructor(
    private readonly kysely: Kysely<Schema>,
    private readonly options: GroupCommitEngineOptions,
  ) {}

  callbacksOfCurrentUnit(): Callbacks | undefined {
    return this.#unitCallbacks.getStore();
  }

  /** A transaction per work of its own, one per shared work (as its queue allows). */
  async runGroup(units: readonly Unit[]): Promise<void> {
    const shares = sharesOf(units);
    const runs: Promise<void>[] = [];
    for (const [index, unit] of units.entries()) {
      if (!('shared' in unit)) {
        runs.push(this.#transaction(unit.work).then((outcome) => settleAll([unit], [outcome])));
        continue;
      }
      const indexes = shares.get(unit.shared);
      if (indexes?.[0] !== index) continue;
      runs.push(
        this.#shared(
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
  async #shared(shared: SharedWork<unknown, unknown>, units: readonly SharedUnit[]): Promise<void> {
    let queue = this.#sharedQueues.get(shared);
    if (queue === undefined) {
      queue = { waiting: [], running: 0 };
      this.#sharedQueues.set(shared, queue);
    }
    queue.waiting.push(...units);
    if (queue.running >= SHARED_IN_FLIGHT) return;
    queue.running += 1;
    try {
      while (queue.waiting.length > 0) {
        const taken = queue.waiting.splice(0, this.options.maxGroup);
        // Together in one transaction; if that fails, each alone in one of its own, settled as it ends.
        await togetherThenAlone(
          shared,
          taken.map((unit) => unit.input),
          (work) => this.#transaction(work),
          this.options.tally,
          (index, outcome) => settleAll([taken[index] as SharedUnit], [outcome]),
        );
      }
    } finally {
      queue.running -= 1;
      if (queue.running === 0) this.#sharedQueues.delete(shared);
    }
  }

  /** `work` in a transaction of its own, run again when it lost a race
   * (lost-race.ts); its callbacks run after the COMMIT. */
  async #transaction(work: UnitWork<unknown>): Promise<Outcome> {
    const tally = this.options.tally;
    let callbacks: Callbacks = [];
    let outcome: Outcome;
    try {
      outcome = await retryingLostRaces(
        () => {
          tally.counters.groups += 1;
          return this.kysely.transaction().execute(async (trx) => {
            const own: Callbacks = [];
            const ran = await outcomeOf(() => this.#unitCallbacks.run(own, () => work(trx)), own);
            // Thrown to roll back; answered below (a lost race as itself, to be run again).
            if (!ran.outcome.ok)
              throw isLostRace(ran.outcome.error) ? ran.outcome.error : new RolledBack(ran.outcome.error);
            callbacks = ran.callbacks;
            return ran.outcome;
          });
        },
        () => (tally.raceRetries += 1),
      );
    } catch (error) {
      return { ok: false, error: error instanceof RolledBack ? error.cause : error };
    }
    runCallbacks(callbacks, tally);
    return outcome;
  }
}

/** A unit's own error, carried through the transaction's rollback. */
class RolledBack extends Error {
  constructor(override readonly cause: unknown) {
    super('unit rolled back');
  }
}
