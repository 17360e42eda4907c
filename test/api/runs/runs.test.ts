// Kept runs on both stores (api/runs/runs.ts over repository.ts): pages
// newest first with a cursor that holds while runs arrive, the filters,
// the retention per box on a stepped clock (a running run never dropped),
// the runs left running that start-up ends, and the sweep that ends the
// quiet command-line runs while the API runs (two processes on one
// database among them).
import test from 'ava';
import type { Store } from '../../../api/db/store.js';
import type { RunLike } from '../../../api/events/types.js';
import { RunRepository } from '../../../api/runs/repository.js';
import { INTERRUPTED_ERROR, QUIET_ERROR, Runs, type RunView } from '../../../api/runs/index.js';
import { QUIET_RUN_MS, QUIET_SWEEP_MAX_WAIT_MS } from '../../../api/runs/runs.js';
import { FakeClock } from '../../../lib/fake-clock.js';
import { silentLogger } from '../../../lib/logger.js';
import { insertBox, insertParking } from '../../helpers/store-rows.js';
import { secondStore } from '../../helpers/second-store.js';
import { storeTests } from '../../helpers/stores.js';
import { waitFor } from '../../helpers/wait.js';

const storeTest = storeTests(test);

const DAY_MS = 86_400_000;

interface Kept {
  runs: Runs;
  clock: FakeClock;
  published: RunLike[];
}

async function kept(store: Store, retention: { perBox?: number; days?: number } = {}): Promise<Kept> {
  const clock = new FakeClock(Date.UTC(2026, 5, 1, 8));
  const parkingId = await insertParking(store, { parking_key: '22'.repeat(16), created_at: clock.now() });
  for (const moduleId of [101, 102]) await insertBox(store, { moduleId, parkingId, createdAt: clock.now() });
  return { clock, ...keptOn(store, clock, retention) };
}

/** Runs over `store` (one process's), telling what it publishes. */
function keptOn(
  store: Store,
  clock: FakeClock,
  retention: { perBox?: number; days?: number } = {},
): Omit<Kept, 'clock'> {
  const published: RunLike[] = [];
  const runs = new Runs({
    store,
    clock,
    config: { runsKeptPerBox: retention.perBox ?? 200, runsKeptDays: retention.days ?? 90 },
    events: { publishRun: (run) => published.push(run) },
    logger: silentLogger,
  });
  return { runs, published };
}

/** Whether `published` holds the run `id` ended. */
function endedIn(published: readonly RunLike[], id: string): boolean {
  return published.some((run) => run.id === id && (run as RunView).state !== 'running');
}

function conformanceRun(moduleId: number, labels: Record<string, string> = {}) {
  return { moduleId, kind: 'conformance', source: 'cli', startedBy: 'bench', target: 'mqtt', labels } as const;
}

storeTest(
  'pages of runs newest first; a cursor holds while runs arrive; the filters (box, labels all matching, verdict, kind)',
  async (t, store) => {
    const { runs, clock } = await kept(store);
    const ids: string[] = [];
    for (let index = 0; index < 25; index++) {
      const moduleId = index % 2 === 0 ? 101 : 102;
      const labels = { firmware: index < 10 ? '1.0' : '1.1', hw: index % 3 === 0 ? 'rev-b' : 'rev-a' };
      const run = await runs.start(conformanceRun(moduleId, labels));
      ids.push(run.id);
      if (index % 5 === 4)
        await runs.end(run.id, { state: 'failed', error: null, summary: {}, report: undefined, captures: undefined });
      else if (index % 5 !== 3)
        await runs.end(run.id, { state: 'passed', error: null, summary: {}, report: undefined, captures: undefined });
      // Every other run starts in the same millisecond as the one before: the id orders them.
      if (index % 2 === 1) clock.advance(1_000);
    }
    const newestFirst = [...ids].sort((a, b) => {
      const at = (id: string) => Math.floor(ids.indexOf(id) / 2);
      return at(b) - at(a) || (b < a ? -1 : 1);
    });

    const first = await runs.list({ limit: 10 });
    t.deepEqual(
      first.runs.map((run) => run.id),
      newestFirst.slice(0, 10),
    );
    t.truthy(first.next_cursor);
    // A run arriving between pages is newer than every cursor: nothing shifts.
    await runs.start(conformanceRun(101));
    const second = await runs.list({ limit: 10, cursor: first.next_cursor ?? '' });
    t.deepEqual(
      second.runs.map((run) => run.id),
      newestFirst.slice(10, 20),
    );
    const third = await runs.list({ limit: 10, cursor: second.next_cursor ?? '' });
    t.deepEqual(
      third.runs.map((run) => run.id),
      newestFirst.slice(20),
    );
    t.is(third.next_cursor, null);
    t.false('results' in (third.runs[0] ?? {}));

    const ofBox = await runs.list({ limit: 100, moduleId: 102 });
    t.is(ofBox.runs.length, 12);
    t.true(ofBox.runs.every((run) => run.module_id === 102));
    const labelled = await runs.list({
      limit: 100,
      labels: [
        ['firmware', '1.1'],
        ['hw', 'rev-b'],
      ],
    });
    t.deepEqual(
      labelled.runs.map((run) => run.id).sort(),
      ids.filter((_, index) => index >= 10 && index % 3 === 0).sort(),
    );
    t.true(labelled.runs.every((run) => run.labels['firmware'] === '1.1' && run.labels['hw'] === 'rev-b'));
    t.deepEqual((await runs.list({ limit: 100, labels: [['firmware', '2.0']] })).runs, []);
    const failed = await runs.list({ limit: 100, state: 'failed' });
    t.deepEqual(failed.runs.map((run) => run.id).sort(), ids.filter((_, index) => index % 5 === 4).sort());
    t.is((await runs.list({ limit: 100, state: 'running' })).runs.length, 5 + 1);
    t.is((await runs.list({ limit: 100, kind: 'soak' })).runs.length, 0);

    for (const cursor of [
      'nope',
      Buffer.from('bl1.12').toString('base64url'),
      Buffer.from('run1.x.y').toString('base64url'),
    ])
      await t.throwsAsync(() => runs.list({ limit: 10, cursor }), {
        message: 'is not a next_cursor of this API',
      });
  },
);

storeTest(
  'retention per box as runs end (stepped clock): the newest RUNS_KEPT_PER_BOX, none older than RUNS_KEPT_DAYS, never a running one',
  async (t, store) => {
    const { runs, clock } = await kept(store, { perBox: 3, days: 2 });
    const end = (id: string) =>
      runs.end(id, { state: 'passed', error: null, summary: {}, report: undefined, captures: undefined });
    const running = await runs.start(conformanceRun(101));
    const other = await runs.start(conformanceRun(102));
    await end(other.id);
    const ended: string[] = [];
    for (let index = 0; index < 4; index++) {
      clock.advance(60_000);
      const run = await runs.start(conformanceRun(101));
      ended.push(run.id);
      await end(run.id);
    }
    // Box 101: its newest 3 are ended[1..3]; the oldest, still running, stays; ended[0] went.
    const of101 = async () => (await runs.list({ limit: 100, moduleId: 101 })).runs.map((run) => run.id);
    t.deepEqual(await of101(), [ended[3], ended[2], ended[1], running.id]);
    t.is(await runs.get(ended[0] ?? ''), undefined);
    // The other box's run is another box's count.
    t.truthy(await runs.get(other.id));

    // Three days on: past RUNS_KEPT_DAYS, they go when a run of the box ends, the running one stays.
    clock.advance(3 * DAY_MS);
    const fresh = await runs.start(conformanceRun(101));
    await end(fresh.id);
    t.deepEqual(await of101(), [fresh.id, running.id]);
    // Box 102 is pruned at start-up (recover), not by box 101's end.
    t.truthy(await runs.get(other.id));
    // The running one is alive (it posted a moment ago): start-up leaves it running.
    await runs.addResults(running.id, []);
    await runs.recover();
    t.is(await runs.get(other.id), undefined);
    t.like(await runs.get(running.id), { state: 'running' });
  },
);

storeTest('RUNS_KEPT_DAYS 0 keeps runs of any age', async (t, store) => {
  const { runs, clock } = await kept(store, { perBox: 100, days: 0 });
  const old = await runs.start(conformanceRun(101));
  await runs.end(old.id, { state: 'passed', error: null, summary: {}, report: undefined, captures: undefined });
  clock.advance(1_000 * DAY_MS);
  await runs.recover();
  t.truthy(await runs.get(old.id));
});

storeTest(
  "start-up ends the runs no process runs: the API's without a live hold, the command line's quiet for a day; a live one stays",
  async (t, store) => {
    const { runs, clock, published } = await kept(store);
    const api = await runs.start({ ...conformanceRun(101), source: 'page' });
    const held = await runs.start({ ...conformanceRun(102), source: 'api' });
    await store.kysely
      .insertInto('box_holds')
      .values({ module_id: 102, holder: held.id, held_until: clock.now() + 60_000, created_at: clock.now() })
      .execute();
    const quiet = await runs.start(conformanceRun(101));
    clock.advance(QUIET_RUN_MS - 1_000);
    const talking = await runs.start(conformanceRun(102));
    await runs.addResults(quiet.id, []);
    clock.advance(2_000);
    const stale = await runs.start({ ...conformanceRun(101), startedMs: clock.now() - 2 * QUIET_RUN_MS });
    clock.advance(QUIET_RUN_MS + 1);
    // The hold of `held` is renewed by its (live) process.
    await store.kysely
      .updateTable('box_holds')
      .set({ held_until: clock.now() + 60_000 })
      .execute();
    // `talking` posted a moment ago.
    await runs.addResults(talking.id, []);
    published.length = 0;
    await runs.recover();
    t.like(await runs.get(api.id), { state: 'error', error: INTERRUPTED_ERROR });
    t.like(await runs.get(held.id), { state: 'running', error: null });
    t.like(await runs.get(stale.id), { state: 'error', error: QUIET_ERROR });
    t.like(await runs.get(quiet.id), { state: 'error', error: QUIET_ERROR });
    t.like(await runs.get(talking.id), { state: 'running', error: null });
    // Each ended run is told to the stream.
    t.deepEqual(published.map((run) => run.id).sort(), [api.id, quiet.id, stale.id].sort());
  },
);

storeTest(
  "while the API runs, the sweep ends a command-line run quiet past QUIET_RUN_MS (stepped clock); one posted to lately stays, the API's own runs are left to their holds; close stops it",
  async (t, store) => {
    const { runs, clock, published } = await kept(store);
    const silent = await runs.start(conformanceRun(101));
    const talking = await runs.start({ ...conformanceRun(102), source: 'ci' });
    // Runs of the API without a hold: start-up would end them, the sweep does not.
    const page = await runs.start({ ...conformanceRun(101), source: 'page' });
    const api = await runs.start({ ...conformanceRun(102), source: 'api' });
    // The sweep's deadline is read from the oldest post of a running command-line run, a number on both engines.
    t.is(await new RunRepository(store).oldestCommandLinePost(), Date.parse(silent.started_at));
    runs.startQuietSweep();
    await waitFor(() => clock.pendingTimers === 1, 'the sweep armed');
    // An hour before the bound, `talking` posts; `silent` does not.
    await clock.advanceAsync(QUIET_RUN_MS - QUIET_SWEEP_MAX_WAIT_MS, QUIET_SWEEP_MAX_WAIT_MS / 4);
    await runs.addResults(talking.id, []);
    t.like(await runs.get(silent.id), { state: 'running' });
    published.length = 0;
    await clock.advanceAsync(QUIET_SWEEP_MAX_WAIT_MS + 1, QUIET_SWEEP_MAX_WAIT_MS / 4);
    await waitFor(() => endedIn(published, silent.id), 'the silent run ended');
    // The sweep is over once its timer is set again.
    await waitFor(() => clock.pendingTimers === 1, 'the sweep armed again');
    t.like(await runs.get(silent.id), { state: 'error', error: QUIET_ERROR });
    t.deepEqual(
      published.map((run) => run.id),
      [silent.id],
    );
    for (const id of [talking.id, page.id, api.id]) t.like(await runs.get(id), { state: 'running', error: null });
    // `talking` goes quiet too: a bound after its post, it ends.
    await clock.advanceAsync(QUIET_RUN_MS, QUIET_SWEEP_MAX_WAIT_MS / 4);
    await waitFor(() => endedIn(published, talking.id), 'the talking run ended');
    t.like(await runs.get(talking.id), { state: 'error', error: QUIET_ERROR });
    for (const id of [page.id, api.id]) t.like(await runs.get(id), { state: 'running' });
    await runs.close();
    t.is(clock.pendingTimers, 0);
  },
);

storeTest(
  'two API processes sweep one database: a quiet run is ended once and told once; a run that posts as it is swept stays running',
  async (t, store) => {
    const { runs: first, clock, published: firstPublished } = await kept(store);
    const { runs: second, published: secondPublished } = keptOn(secondStore(t, store), clock);
    const quiet = await first.start(conformanceRun(101));
    const alsoQuiet = await second.start({ ...conformanceRun(102), source: 'ci' });
    clock.advance(QUIET_RUN_MS + 1);
    firstPublished.length = 0;
    secondPublished.length = 0;
    // Both sweeps at once, several times over: each run is ended by one UPDATE of one of them.
    await Promise.all([first.endQuiet(clock.now()), second.endQuiet(clock.now()), first.endQuiet(clock.now())]);
    const told = [...firstPublished, ...secondPublished];
    t.deepEqual(told.map((run) => run.id).sort(), [quiet.id, alsoQuiet.id].sort());
    t.true(told.every((run) => (run as RunView).state === 'error'));
    for (const id of [quiet.id, alsoQuiet.id]) t.like(await first.get(id), { state: 'error', error: QUIET_ERROR });

    // Their timers on one clock, both started: the run is ended once.
    const late = await second.start(conformanceRun(102));
    firstPublished.length = 0;
    secondPublished.length = 0;
    first.startQuietSweep();
    second.startQuietSweep();
    await waitFor(() => clock.pendingTimers === 2, 'both sweeps armed');
    await clock.advanceAsync(QUIET_RUN_MS + QUIET_SWEEP_MAX_WAIT_MS, QUIET_SWEEP_MAX_WAIT_MS / 2);
    await waitFor(() => endedIn([...firstPublished, ...secondPublished], late.id), 'the late run ended');
    await Promise.all([first.close(), second.close()]);
    t.deepEqual(
      [...firstPublished, ...secondPublished].map((run) => run.id),
      [late.id],
    );

    // A run that posts between a sweep's read and its end stays running: the end is conditional on the quiet.
    const racing = await first.start(conformanceRun(101));
    clock.advance(QUIET_RUN_MS + 1);
    const repository = new RunRepository(store);
    const [orphan] = await repository.orphans(clock.now(), QUIET_RUN_MS, { commandLineOnly: true });
    t.is(orphan?.id, racing.id);
    await first.addResults(racing.id, []);
    t.false(
      await repository.end(racing.id, {
        state: 'error',
        error: QUIET_ERROR,
        summary: undefined,
        report: undefined,
        captures: undefined,
        endedMs: clock.now(),
        quietSince: clock.now() - QUIET_RUN_MS,
      }),
    );
    t.like(await first.get(racing.id), { state: 'running' });
  },
);

storeTest(
  'results append in order across calls; a run that ended takes none; an unknown run is not found',
  async (t, store) => {
    const { runs } = await kept(store);
    const run = await runs.start(conformanceRun(101, { firmware: '2.0' }));
    const result = (name: string) =>
      ({ name, result: 'pass', reason: null, ms: 1.5, value: null, details: {} }) as const;
    await runs.addResults(run.id, [result('a'), result('b')]);
    await Promise.all([runs.addResults(run.id, [result('c')]), runs.addResults(run.id, [result('d')])]);
    const got = await runs.found(run.id);
    t.deepEqual(
      got.results.slice(0, 2).map((entry) => entry.name),
      ['a', 'b'],
    );
    t.deepEqual(got.results.map((entry) => entry.name).sort(), ['a', 'b', 'c', 'd']);
    t.is(got.results[0]?.ms, 1.5);
    t.deepEqual(got.labels, { firmware: '2.0' });
    await runs.end(run.id, {
      state: 'passed',
      error: null,
      summary: { passed: 4 },
      report: { interrupted: false },
      captures: ['/x.pcapng'],
    });
    await t.throwsAsync(() => runs.addResults(run.id, [result('e')]), { message: /has ended \(passed\)/ });
    await t.throwsAsync(() => runs.addResults('nosuchrun', [result('e')]), { message: 'no run nosuchrun' });
    await t.throwsAsync(() => runs.start(conformanceRun(999)), { message: 'no box 999' });
    t.deepEqual((await runs.withReport(run.id)).report, { interrupted: false });
  },
);
