// Group commit on both engines (api/db/group-commit.ts): the inputs of a
// shared work that arrive while its transactions run gather for the next
// one, instead of a transaction each (one HTTP batch a transaction, each
// waiting on the others' row locks, holds PostgreSQL to about 9,600 logs/s). SQLite runs one group at a time; PostgreSQL at most two
// transactions of one shared work at once.
import test from 'ava';
import { GroupCommit, type SharedWork } from '../../../api/db/group-commit.js';
import type { Executor } from '../../../api/db/store.js';
import { storeTests } from '../../helpers/stores.js';

const storeTest = storeTests(test);

/** A shared work whose calls wait until the test opens them, so it can send inputs while they run. */
class GatedWork implements SharedWork<number, number> {
  readonly calls: number[][] = [];
  #open = false;
  readonly #held: (() => void)[] = [];
  #onCall: (() => void) | undefined;

  async runAll(_on: Executor, inputs: readonly number[]): Promise<number[]> {
    this.calls.push([...inputs]);
    this.#onCall?.();
    if (!this.#open) await new Promise<void>((resolve) => this.#held.push(resolve));
    return inputs.map((input) => input * 10);
  }

  /** Resolves once runAll has been called `count` times in all. */
  async called(count: number): Promise<void> {
    while (this.calls.length < count) await new Promise<void>((resolve) => (this.#onCall = resolve));
  }

  /** Lets every call held now and every later one complete. */
  open(): void {
    this.#open = true;
    for (const release of this.#held.splice(0)) release();
  }
}

/** A few turns of the event loop: what was sent is grouped and waiting. */
async function turns(count: number): Promise<void> {
  for (let turn = 0; turn < count; turn += 1) await new Promise((resolve) => setImmediate(resolve));
}

storeTest(
  'inputs of a shared work sent while its transactions run gather for the next one; each gets its own answer',
  async (t, store) => {
    const group = new GroupCommit(store);
    const work = new GatedWork();
    const first = group.runShared(work, 1);
    await work.called(1);
    const second = group.runShared(work, 2);
    if (store.dialect === 'postgres') await work.called(2);
    // Two more, each in a turn of its own: a group each, had they not waited.
    const third = group.runShared(work, 3);
    await turns(3);
    const fourth = group.runShared(work, 4);
    await turns(3);
    work.open();
    t.deepEqual(await Promise.all([first, second, third, fourth]), [10, 20, 30, 40]);
    if (store.dialect === 'sqlite') {
      t.deepEqual(work.calls, [[1], [2, 3, 4]], 'one group at a time: what waits for it runs as the next group');
      t.deepEqual(group.counters, { groups: 2, units: 4 });
    } else {
      t.deepEqual(
        work.calls,
        [[1], [2], [3, 4]],
        'two transactions at once; the inputs sent meanwhile wait and run together in the next',
      );
      t.deepEqual(group.counters, { groups: 3, units: 4 });
    }
    t.is(group.ranAlone, 0);
  },
);
