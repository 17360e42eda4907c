// The control queue and the per-box control sequence on both stores:
// ControlCommandRepository and ControlSequences, and the races across
// processes (two stores on one database, as two API processes have): a
// sequence is given once, a command is claimed by one dispatcher, and a
// dispatcher whose lease passed and was taken over changes nothing of the
// new holder's.
import test from 'ava';
import type { Store } from '../../../api/db/store.js';
import { ControlDispatcher } from '../../../api/control/dispatcher.js';
import { BoxHolds } from '../../../api/control/holds.js';
import { ControlCommandRepository, type NewControlCommand } from '../../../api/control/repository.js';
import { ControlSequences, MAX_CONTROL_SEQ } from '../../../api/control/sequence.js';
import type { CommandOutcome } from '../../../api/boxes/index.js';
import { FakeClock } from '../../../lib/fake-clock.js';
import { secondStore } from '../../helpers/second-store.js';
import { run } from '../../helpers/sql.js';
import { insertParking } from '../../helpers/store-rows.js';
import { storeTests } from '../../helpers/stores.js';
import { sent } from '../../helpers/control-send.js';

const storeTest = storeTests(test);

const NOW = Date.UTC(2026, 10, 23, 12);
const BOX_KEY = '11'.repeat(16);

function addParking(store: Store): Promise<number> {
  return insertParking(store, { parking_key: '22'.repeat(32), created_at: NOW });
}

async function addBox(store: Store, parkingId: number, moduleId: number): Promise<void> {
  await store.kysely
    .insertInto('boxes')
    .values({
      module_id: moduleId,
      parking_id: parkingId,
      direction: 'entrance',
      mac_address: `02:00:00:00:00:${moduleId.toString(16).padStart(2, '0')}`,
      box_key: BOX_KEY,
      mqtt_username: `box-${moduleId}`,
      mqtt_password_hash: 'hash',
      created_at: NOW,
      last_seen_at: null,
      last_box_seq: null,
      last_box_time: null,
      box_time_drift_seconds: null,
      battery_mv: null,
      last_control_seq: null,
    })
    .execute();
}

function revoke(parkingId: number, moduleId: number, operation: string): NewControlCommand {
  return {
    moduleId,
    kind: 'REVOKE',
    body: { entries: [{ key_id: 7, until: 1_900_000_000 }] },
    operation,
    purpose: 'revoke',
    parkingId,
    requestedBy: 'test',
  };
}

/** A parking with boxes 1 and 2, and the repository. */
async function queue(store: Store): Promise<{ parkingId: number; commands: ControlCommandRepository }> {
  const parkingId = await addParking(store);
  await addBox(store, parkingId, 1);
  await addBox(store, parkingId, 2);
  return { parkingId, commands: new ControlCommandRepository(store) };
}

async function idOf(commands: ControlCommandRepository, operation: string, moduleId: number): Promise<number> {
  const row = (await commands.listOfOperation(operation)).find((command) => command.module_id === moduleId);
  if (row === undefined) throw new Error(`no command of ${operation} for box ${moduleId}`);
  return row.id;
}

/** The queue with one REVOKE queued for box 1 (operation revoke:7), and its id. */
async function oneRevoke(store: Store): Promise<{ commands: ControlCommandRepository; id: number }> {
  const { parkingId, commands } = await queue(store);
  await commands.insert(revoke(parkingId, 1, 'revoke:7'), NOW);
  return { commands, id: await idOf(commands, 'revoke:7', 1) };
}

/** A claim by the poll: only a command whose next attempt is due. */
const due = { evenIfBackingOff: false };

storeTest(
  'insert queues one command per operation and box; a second insert of the same is nothing',
  async (t, store) => {
    const { parkingId, commands } = await queue(store);
    await commands.insert(revoke(parkingId, 2, 'revoke:7'), NOW);
    await commands.insert(revoke(parkingId, 1, 'revoke:7'), NOW);
    await commands.insert({ ...revoke(parkingId, 1, 'revoke:7'), requestedBy: 'again' }, NOW + 1);
    const rows = await commands.listOfOperation('revoke:7');
    t.deepEqual(
      rows.map((row) => row.module_id),
      [1, 2],
    );
    t.like(rows[0], {
      kind: 'REVOKE',
      purpose: 'revoke',
      parking_id: parkingId,
      smart_key_id: null,
      requested_by: 'test',
      state: 'pending',
      attempts: 0,
      replays: 0,
      control_seq: null,
      in_flight_until: null,
      next_attempt_at: NOW,
      created_at: NOW,
      finished_at: null,
    });
    t.deepEqual(JSON.parse(rows[0]?.body ?? ''), { entries: [{ key_id: 7, until: 1_900_000_000 }] });
    t.true(await commands.hasOperation('revoke:7'));
    t.false(await commands.hasOperation('revoke:8'));
    t.like(await commands.findById(rows[1]?.id ?? 0), { module_id: 2 });
    t.is(await commands.findById(999_999), undefined);
  },
);

storeTest('pendingHeads: the oldest pending command of each box, in id order; headOf: one box', async (t, store) => {
  const { parkingId, commands } = await queue(store);
  await commands.insert(revoke(parkingId, 2, 'a'), NOW);
  await commands.insert(revoke(parkingId, 1, 'b'), NOW);
  await commands.insert(revoke(parkingId, 2, 'c'), NOW);
  await commands.insert(revoke(parkingId, 1, 'd'), NOW);
  const a = await idOf(commands, 'a', 2);
  const b = await idOf(commands, 'b', 1);
  t.deepEqual(
    (await commands.pendingHeads(NOW)).map((row) => [row.operation, row.module_id]),
    [
      ['a', 2],
      ['b', 1],
    ],
  );
  // Box 2's head done, box 1's failed: the next of each is its head.
  const done = { status: 'OK', error: null, nextAttemptAt: NOW, replays: 0 };
  await commands.settle(a, { ...done, state: 'done' }, NOW);
  await commands.settle(b, { ...done, state: 'failed' }, NOW);
  t.deepEqual(
    (await commands.pendingHeads(NOW)).map((row) => [row.operation, row.module_id]),
    [
      ['c', 2],
      ['d', 1],
    ],
  );
  t.like(await commands.headOf(1, NOW), { operation: 'd' });
  t.like(await commands.findById(a), { state: 'done', last_status: 'OK', finished_at: NOW });
  await commands.settle(await idOf(commands, 'd', 1), { ...done, state: 'done' }, NOW);
  t.is(await commands.headOf(1, NOW), undefined);
});

storeTest(
  'a box held by a conformance run: pendingHeads and headOf leave it out while the lease is ahead; another run is refused, the lease renewed only while live, a passed one taken over',
  async (t, store) => {
    const { parkingId, commands } = await queue(store);
    await commands.insert(revoke(parkingId, 1, 'a'), NOW);
    await commands.insert(revoke(parkingId, 2, 'b'), NOW);
    const holds = new BoxHolds(store);
    const acquire = (holder: string, nowMs: number) =>
      store.kysely.transaction().execute((trx) => holds.acquire(1, holder, nowMs, nowMs + 60_000, trx));
    t.is(await acquire('run-1', NOW), undefined);
    t.deepEqual(
      (await commands.pendingHeads(NOW)).map((row) => row.operation),
      ['b'],
    );
    t.is(await commands.headOf(1, NOW + 59_999), undefined);
    t.like(await commands.headOf(2, NOW), { operation: 'b' });
    // Another run (any process) gets the live hold back, and takes nothing.
    t.like(await acquire('run-2', NOW + 1), { holder: 'run-1', held_until: NOW + 60_000 });
    t.like(await holds.liveHoldOf(1, NOW + 1), { holder: 'run-1' });
    // Renewed by its holder while live; by no one else.
    t.true(await holds.renew(1, 'run-1', NOW + 20_000, NOW + 80_000));
    t.false(await holds.renew(1, 'run-2', NOW + 20_000, NOW + 80_000));
    t.is(await commands.headOf(1, NOW + 79_999), undefined);
    // The lease passed (its process died): the box's head is back, the hold is not renewed but taken over.
    t.like(await commands.headOf(1, NOW + 80_000), { operation: 'a' });
    t.deepEqual(
      (await commands.pendingHeads(NOW + 80_000)).map((row) => row.operation),
      ['a', 'b'],
    );
    t.false(await holds.renew(1, 'run-1', NOW + 80_000, NOW + 140_000));
    t.is(await acquire('run-2', NOW + 80_000), undefined);
    // The late holder's release leaves the new one's hold alone.
    await holds.release(1, 'run-1');
    t.like(await holds.liveHoldOf(1, NOW + 80_001), { holder: 'run-2' });
    await holds.release(1, 'run-2');
    t.is(await holds.liveHoldOf(1, NOW + 80_001), undefined);
  },
);

storeTest('claim: once while in flight; again with a new sequence once the lease has passed', async (t, store) => {
  const { commands, id } = await oneRevoke(store);
  t.true(await commands.claim(id, sent(5), NOW, NOW + 2_000, due));
  t.like(await commands.findById(id), {
    control_seq: 5,
    attempts: 1,
    in_flight_until: NOW + 2_000,
    last_attempt_at: NOW,
  });
  t.false(await commands.claim(id, sent(6), NOW + 1_999, NOW + 4_000, due), 'in flight');
  t.true(await commands.claim(id, sent(7), NOW + 2_000, NOW + 4_000, due), 'the lease passed');
  t.like(await commands.findById(id), { control_seq: 7, attempts: 2, in_flight_until: NOW + 4_000 });
  await commands.settle(id, { state: 'done', status: 'OK', error: null, nextAttemptAt: NOW, replays: 0 }, NOW);
  t.false(await commands.claim(id, sent(8), NOW + 10_000, NOW + 12_000, due), 'no longer pending');
});

storeTest(
  'claim: a command backing off is taken once its next attempt is due, or at once when its box was just seen online',
  async (t, store) => {
    const { commands, id } = await oneRevoke(store);
    t.true(await commands.claim(id, sent(5), NOW, NOW + 2_000, due));
    t.true(await commands.retryLater(id, 5, 'no answer in time', NOW + 3_000));
    // A dispatcher that read the row before retryLater committed sees it free.
    t.false(await commands.claim(id, sent(6), NOW + 2_000, NOW + 4_000, due), 'backing off');
    t.false(await commands.claim(id, sent(6), NOW + 2_999, NOW + 5_000, due), 'still backing off');
    t.true(
      await commands.claim(id, sent(6), NOW + 2_500, NOW + 4_500, { evenIfBackingOff: true }),
      'its box just online',
    );
    t.like(await commands.findById(id), { control_seq: 6, attempts: 2, in_flight_until: NOW + 4_500 });
    t.true(await commands.retryLater(id, 6, 'no answer in time', NOW + 8_000));
    t.true(await commands.claim(id, sent(7), NOW + 8_000, NOW + 10_000, due), 'due');
  },
);

storeTest('retryLater and settleSent change only the send that still holds the command', async (t, store) => {
  const { commands, id } = await oneRevoke(store);
  t.true(await commands.claim(id, sent(5), NOW, NOW + 2_000, due));
  t.true(await commands.retryLater(id, 5, 'no answer in time', NOW + 3_000));
  t.like(await commands.findById(id), {
    state: 'pending',
    in_flight_until: null,
    next_attempt_at: NOW + 3_000,
    last_error: 'no answer in time',
  });
  t.false(await commands.retryLater(id, 5, 'twice', NOW + 9_000), 'not in flight any more');
  // Taken again with 6: the send of 5 is over.
  t.true(await commands.claim(id, sent(6), NOW + 3_000, NOW + 5_000, due));
  const failed = { state: 'failed' as const, status: 'MALFORMED', error: 'x', nextAttemptAt: NOW, replays: 0 };
  t.false(await commands.retryLater(id, 5, 'late', NOW + 9_000));
  t.false(await commands.settleSent(id, 5, failed, NOW + 4_000));
  t.like(await commands.findById(id), { state: 'pending', control_seq: 6, in_flight_until: NOW + 5_000 });
  t.true(await commands.settleSent(id, 6, failed, NOW + 4_000));
  t.like(await commands.findById(id), { state: 'failed', in_flight_until: null, finished_at: NOW + 4_000 });
  t.false(await commands.retryLater(id, 6, 'settled', NOW + 9_000));
});

storeTest('unfinished counts the pending and failed commands of an operation', async (t, store) => {
  const { parkingId, commands } = await queue(store);
  t.is(await commands.unfinished('revoke:7'), 0);
  await commands.insert(revoke(parkingId, 1, 'revoke:7'), NOW);
  await commands.insert(revoke(parkingId, 2, 'revoke:7'), NOW);
  await commands.insert(revoke(parkingId, 2, 'revoke:8'), NOW);
  t.is(await commands.unfinished('revoke:7'), 2);
  const outcome = { status: 'OK', error: null, nextAttemptAt: NOW, replays: 0 };
  await commands.settle(await idOf(commands, 'revoke:7', 1), { ...outcome, state: 'done' }, NOW);
  t.is(await commands.unfinished('revoke:7'), 1);
  await commands.settle(await idOf(commands, 'revoke:7', 2), { ...outcome, state: 'failed' }, NOW);
  t.is(await commands.unfinished('revoke:7'), 1, 'failed is not done');
});

storeTest('the control sequence: taken one by one, skipped ahead only, none past the u32', async (t, store) => {
  await queue(store);
  const sequences = new ControlSequences(store);
  t.is(await sequences.next(1), 1);
  t.is(await sequences.next(1), 2);
  t.is(await sequences.next(2), 1, 'one counter per box');
  t.is(await sequences.next(99), undefined, 'no such box');
  await sequences.skipTo(1, 1_000);
  t.is(await sequences.next(1), 1_000);
  await sequences.skipTo(1, 10);
  t.is(await sequences.next(1), 1_001, 'never back');
  await sequences.skipTo(1, MAX_CONTROL_SEQ);
  t.is(await sequences.next(1), MAX_CONTROL_SEQ, 'the last u32');
  t.is(await sequences.next(1), undefined, 'used up');
  await sequences.skipTo(2, MAX_CONTROL_SEQ + 50);
  t.is(await sequences.next(2), undefined, 'a skip past the u32 uses them up');
});

storeTest('two processes taking sequences of one box at once: every number once, none skipped', async (t, store) => {
  await queue(store);
  const other = secondStore(t, store);
  const take = async (on: Store): Promise<number[]> => {
    const sequences = new ControlSequences(on);
    const taken: number[] = [];
    for (let index = 0; index < 100; index++) {
      const seq = await sequences.next(1);
      if (seq === undefined) throw new Error('no sequence');
      taken.push(seq);
    }
    return taken;
  };
  // Several at once on each store: on PostgreSQL, as many connections.
  const results = await Promise.all([take(store), take(other), take(store), take(other)]);
  const all = results.flat().sort((a, b) => a - b);
  t.deepEqual(
    all,
    Array.from({ length: 400 }, (_, index) => index + 1),
  );
});

storeTest('two processes claiming one command at once: one claim wins, every round', async (t, store) => {
  const { parkingId, commands } = await queue(store);
  const theirs = new ControlCommandRepository(secondStore(t, store));
  for (let round = 0; round < 20; round++) {
    const operation = `round:${round}`;
    await commands.insert(revoke(parkingId, 1, operation), NOW);
    const id = await idOf(commands, operation, 1);
    const won = await Promise.all([
      commands.claim(id, sent(2 * round + 1), NOW, NOW + 2_000, due),
      theirs.claim(id, sent(2 * round + 2), NOW, NOW + 2_000, due),
    ]);
    t.is(won.filter(Boolean).length, 1, `round ${round}: ${JSON.stringify(won)}`);
    const row = await commands.findById(id);
    t.is(row?.control_seq, won[0] ? 2 * round + 1 : 2 * round + 2);
    t.is(row?.attempts, 1);
  }
});

/** A send that resolves when the test says. */
function heldSends(): {
  send: (moduleId: number, frame: Buffer) => Promise<CommandOutcome>;
  sent: Buffer[];
  answer: (index: number, outcome: CommandOutcome) => void;
} {
  const sent: Buffer[] = [];
  const answers: ((outcome: CommandOutcome) => void)[] = [];
  return {
    sent,
    send: (_moduleId, frame) =>
      new Promise((resolve) => {
        sent.push(frame);
        answers.push(resolve);
      }),
    answer: (index, outcome) => answers[index]?.(outcome),
  };
}

function dispatcher(store: Store, clock: FakeClock, send: ReturnType<typeof heldSends>['send']): ControlDispatcher {
  return new ControlDispatcher({
    store,
    clock,
    send,
    answerTimeoutMs: 2_000,
    pollMs: 1_000,
    retry: { initialMs: 1_000, maxMs: 1_000, factor: 1, jitter: 0 },
  });
}

async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; attempt < 500; attempt++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

storeTest(
  'two dispatchers: one sends; the other takes over once the lease passed, and the late one changes nothing of it',
  async (t, store) => {
    const { commands, id } = await oneRevoke(store);
    const clock = new FakeClock(NOW);
    const first = heldSends();
    const second = heldSends();
    const a = dispatcher(store, clock, first.send);
    // On PostgreSQL a pool of its own, as another process has. On SQLite the
    // same connection: a second one in this process would wait synchronously
    // for the first's write transaction, which cannot end meanwhile (two
    // processes on one file: test/cli/control-cli.test.ts).
    const b = dispatcher(store.dialect === 'sqlite' ? store : secondStore(t, store), clock, second.send);
    t.teardown(() => {
      a.stop();
      b.stop();
    });
    a.start();
    b.start();
    await until(() => first.sent.length + second.sent.length === 1, 'one send');
    await new Promise((resolve) => setTimeout(resolve, 50));
    t.is(first.sent.length + second.sent.length, 1, 'one dispatcher only sends it');
    // Say the first one sent it (else swap the roles): it dies mid-delivery,
    // its send never ends in time.
    const [late, taker] = first.sent.length === 1 ? [first, second] : [second, first];
    const held = await commands.findById(id);
    t.like(held, { attempts: 1, in_flight_until: NOW + 2_000 });
    clock.advance(1_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    t.is(taker.sent.length, 0, 'not while the lease holds');
    clock.advance(1_000);
    await until(() => taker.sent.length === 1, 'the take-over');
    await until(async () => (await commands.findById(id))?.attempts === 2, 'the second claim');
    const taken = await commands.findById(id);
    t.not(taken?.control_seq, held?.control_seq, 'a new sequence');
    t.is(taken?.in_flight_until, NOW + 4_000);
    // The late send comes back unanswered: its retry is not stored.
    late.answer(0, { error: 'timeout' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    t.like(await commands.findById(id), {
      control_seq: taken?.control_seq,
      in_flight_until: NOW + 4_000,
      last_error: null,
    });
    // The holder's own unanswered send is.
    taker.answer(0, { error: 'timeout' });
    await until(async () => (await commands.findById(id))?.in_flight_until === null, 'the retry');
    t.like(await commands.findById(id), {
      state: 'pending',
      last_error: 'no answer in time',
      next_attempt_at: NOW + 3_000,
    });
  },
);

/** A real database error in every claim, on either engine: a trigger refusing updates of control_commands. */
async function refuseClaims(store: Store): Promise<void> {
  if (store.dialect === 'sqlite') {
    await run(
      store,
      "CREATE TRIGGER refuse_claims BEFORE UPDATE ON control_commands BEGIN SELECT RAISE(ABORT, 'claims refused'); END",
    );
    return;
  }
  await run(
    store,
    "CREATE FUNCTION refuse_claims() RETURNS trigger LANGUAGE plpgsql AS $body$ BEGIN RAISE EXCEPTION 'claims refused'; END $body$",
  );
  await run(
    store,
    'CREATE TRIGGER refuse_claims BEFORE UPDATE ON control_commands FOR EACH ROW EXECUTE FUNCTION refuse_claims()',
  );
}

async function allowClaims(store: Store): Promise<void> {
  await run(
    store,
    store.dialect === 'sqlite' ? 'DROP TRIGGER refuse_claims' : 'DROP TRIGGER refuse_claims ON control_commands',
  );
}

storeTest('a claim that fails is tried again at the next poll, not at once: no loop of failures', async (t, store) => {
  await oneRevoke(store);
  const clock = new FakeClock(NOW);
  const sends = heldSends();
  const d = dispatcher(store, clock, sends.send);
  t.teardown(() => d.stop());
  await refuseClaims(store);
  d.start();
  await until(() => d.counters.claimFailures === 1 && d.working === 0 && d.inFlight === 0, 'the failed claim');
  // Before, the box's head was read and claimed again at once, failing each
  // time: a short wait for something that must not happen.
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.is(d.counters.claimFailures, 1, 'not claimed again before the next poll');
  t.is(sends.sent.length, 0);
  await allowClaims(store);
  clock.advance(1_000);
  await until(() => sends.sent.length === 1, 'sent at the next poll');
  t.is(d.counters.claimFailures, 1);
});
