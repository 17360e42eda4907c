// Box-log ingestion on both stores
// (docs/decisions/store-sqlite-and-postgresql.md, "The ingestion core"): the
// same ingestBoxLogs over each engine's IngestStore, through the group commit,
// with its dependencies built on a `Store` (test/helpers/box-logs.ts
// ingestionOn): a batch stored (every field, duplicates, refusals naming the
// field), the session effects, the box observation, the outbox rows, a control
// command settled; the group commit's units; and the races across processes
// (two stores on one database): the same verified log stored once, the entrance
// and exit of one session in one millisecond.
import { randomBytes } from 'node:crypto';
import test from 'ava';
import { sql } from 'kysely';
import { FrameKind, Status } from '../../../firmware-protocol/index.js';
import { HttpBoxLogBatches, type HttpBatch, type HttpBatchAnswer } from '../../../api/box-logs/http-batches.js';
import { ingestBoxLogs } from '../../../api/box-logs/ingest.js';
import type { BoxLogInput, IngestOptions } from '../../../api/box-logs/types.js';
import { BoxLogRefusal } from '../../../api/box-logs/errors.js';
import type { Executor, Store } from '../../../api/db/store.js';
import { ResponseIngestion } from '../../../api/mqtt/response-ingester.js';
import { FakeClock } from '../../../lib/fake-clock.js';
import { makeVerifiedResponses } from '../../../simulator/verified-responses.js';
import { boxAnswer, boxLog, ingestionOn } from '../../helpers/box-logs.js';
import type { SeededBox } from '../../helpers/parking.js';
import { secondStore } from '../../helpers/second-store.js';
import {
  insertBox,
  insertParking,
  insertPayment,
  insertSession,
  insertSmartKey,
  insertUser,
} from '../../helpers/store-rows.js';
import { storeTests } from '../../helpers/stores.js';

const storeTest = storeTests(test);

const NOW = Date.UTC(2026, 0, 1);
const HOOK = 'https://receiver.example.org/box-logs';

interface World {
  parkingId: number;
  entrance: SeededBox;
  exit: SeededBox;
  userId: number;
}

let nextModule = 7000;

async function world(store: Store, forwarding = true): Promise<World> {
  const parkingId = await insertParking(store, {
    created_at: NOW,
    ...(forwarding ? { forwarding_url: HOOK, forwarding_expose: 1 } : {}),
  });
  const box = async (direction: 'entrance' | 'exit'): Promise<SeededBox> => {
    const moduleId = (nextModule += 1);
    const boxKey = randomBytes(16);
    await insertBox(store, { moduleId, parkingId, direction, boxKey: boxKey.toString('hex'), createdAt: NOW });
    return { moduleId, direction, macAddress: '', boxKey };
  };
  return { parkingId, entrance: await box('entrance'), exit: await box('exit'), userId: await insertUser(store, NOW) };
}

let nextKey = 9000;

/** A driver with an entering session (paid for its hour), and its key. */
async function driver(store: Store, w: World): Promise<{ userId: number; sessionId: number; keyId: number }> {
  const userId = await insertUser(store, NOW);
  const sessionId = await insertSession(store, { userId, parkingId: w.parkingId, startTime: NOW - 600_000 });
  await insertPayment(store, { sessionId, amountMinor: 100, createdAt: NOW });
  const keyId = (nextKey += 1);
  await insertSmartKey(store, {
    id: keyId,
    userId,
    parkingId: w.parkingId,
    sessionId,
    moduleIds: [w.entrance.moduleId, w.exit.moduleId],
    startTime: NOW - 600_000,
  });
  return { userId, sessionId, keyId };
}

/** A command frame of `kind` naming `keyId` (what a verified answer echoes), its nonce random. */
function command(kind: number, keyId: number): Buffer {
  const frame = randomBytes(40);
  frame[1] = kind;
  frame.writeUInt32BE(keyId, 2);
  return frame;
}

function entry(fields: Parameters<typeof boxLog>[0]): BoxLogInput {
  return boxLog(fields).box_log as never;
}

/** A driver's verified ACCESS at `box`, answered `status` with `remaining` tries. */
function access(
  w: World,
  box: SeededBox,
  d: { userId: number; keyId: number },
  fields: { status?: Status; remaining?: number } = {},
): BoxLogInput {
  const frame = command(FrameKind.ACCESS, d.keyId);
  return entry({
    foUserId: d.userId,
    smartKeyId: d.keyId,
    box,
    parkingId: w.parkingId,
    command: frame,
    response: boxAnswer(box, frame, { status: fields.status ?? Status.OK, remaining: fields.remaining ?? 9 }),
  });
}

async function sessionOf(store: Store, id: number) {
  return store.kysely.selectFrom('parking_sessions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

storeTest(
  'a batch: every field stored, verified or not; a verified log again is its duplicate; outbox rows and the box observation',
  async (t, store) => {
    const clock = new FakeClock(NOW);
    const { deps, told } = ingestionOn(store, clock);
    const w = await world(store);
    const d = await driver(store, w);
    const unverified = entry({
      foUserId: d.userId,
      smartKeyId: null,
      box: w.entrance,
      parkingId: w.parkingId,
      command: null,
      response: null,
    });
    const verified = access(w, w.entrance, d, { remaining: 1 });
    const options: IngestOptions = { source: 'http', userId: d.userId };
    const ingest = (entries: BoxLogInput[]) => deps.groupCommit.run((on) => ingestBoxLogs(deps, on, entries, options));

    const first = await ingest([unverified, verified, verified]);
    t.like(first, [
      { verified: false, duplicate: false },
      { verified: true, duplicate: false },
      { verified: true, duplicate: true },
    ]);
    t.is(first[2]?.id, first[1]?.id, 'the duplicate answers the stored id');
    t.deepEqual(await ingest([verified]), [{ id: first[1]?.id ?? 0, verified: true, duplicate: true }]);

    const rows = await store.kysely.selectFrom('box_logs').selectAll().orderBy('id').execute();
    t.is(rows.length, 2);
    t.like(rows[0], {
      id: first[0]?.id,
      source: 'http',
      fo_user_id: d.userId,
      smart_key_id: null,
      equipment_id: w.entrance.moduleId,
      secured_parking_id: w.parkingId,
      type: 'in',
      response: null,
      offline: 0,
      created_at: '2026-01-01 00:00:00',
      latitude: 48.8566,
      longitude: 2.3522,
      verified: 0,
      box_seq: null,
      received_at: NOW,
    });
    t.like(rows[1], {
      id: first[1]?.id,
      verified: 1,
      status: Status.OK,
      smart_key_id: d.keyId,
      command: verified.command,
    });
    t.true(typeof rows[1]?.box_seq === 'number');
    // Only the verified log is forwarded (the parking forwards verified ones only).
    t.deepEqual(
      await store.kysely
        .selectFrom('forwarding_outbox')
        .select(['box_log_id', 'parking_id', 'url', 'created_at'])
        .execute(),
      [{ box_log_id: first[1]?.id ?? 0, parking_id: w.parkingId, url: HOOK, created_at: NOW }],
    );
    t.like(
      await store.kysely
        .selectFrom('boxes')
        .selectAll()
        .where('module_id', '=', w.entrance.moduleId)
        .executeTakeFirst(),
      {
        last_box_seq: rows[1]?.box_seq,
        last_seen_at: NOW,
        battery_mv: 3700,
      },
    );
    // The effects: entering -> active, the entrance tries lowered to the box's count.
    t.like(await sessionOf(store, d.sessionId), {
      state: 'active',
      entrance_remaining_tries: 1,
      exit_remaining_tries: 3,
    });
    t.deepEqual(told.boxLogs, [first[0]?.id, first[1]?.id]);
    t.deepEqual(told.forwarding, [w.parkingId]);
    t.true(told.sessions.includes(d.sessionId));
  },
);

storeTest(
  'an older box_seq does not overwrite the box observation; a stale state changes no session',
  async (t, store) => {
    const { deps } = ingestionOn(store, new FakeClock(NOW));
    const w = await world(store, false);
    const d = await driver(store, w);
    const newer = access(w, w.entrance, d, { remaining: 2 });
    const older = access(w, w.entrance, d, { remaining: 3 });
    const ingest = (entries: BoxLogInput[]) =>
      deps.groupCommit.run((on) => ingestBoxLogs(deps, on, entries, { source: 'mqtt' }));
    // boxAnswer numbers its answers in order: `older` has the higher box_seq; send it first.
    await ingest([older]);
    const seen = await store.kysely
      .selectFrom('boxes')
      .select('last_box_seq')
      .where('module_id', '=', w.entrance.moduleId)
      .executeTakeFirstOrThrow();
    await ingest([newer]);
    t.deepEqual(
      await store.kysely
        .selectFrom('boxes')
        .select('last_box_seq')
        .where('module_id', '=', w.entrance.moduleId)
        .executeTakeFirstOrThrow(),
      seen,
    );
    t.like(await sessionOf(store, d.sessionId), { state: 'active', entrance_remaining_tries: 2 });
    t.is(
      await store.kysely.selectFrom('forwarding_outbox').select('id').executeTakeFirst(),
      undefined,
      'no forwarding',
    );
  },
);

storeTest('refusals name the element and field; nothing of the batch is written', async (t, store) => {
  const { deps } = ingestionOn(store, new FakeClock(NOW));
  const w = await world(store);
  const d = await driver(store, w);
  const other = await driver(store, w);
  const good = access(w, w.entrance, d);
  const ingest = (entries: BoxLogInput[]) =>
    deps.groupCommit.run((on) => ingestBoxLogs(deps, on, entries, { source: 'http', userId: d.userId }));
  const missing = await t.throwsAsync(ingest([good, { ...good, equipment_id: 4242, smart_key_id: 77 }]), {
    instanceOf: BoxLogRefusal,
  });
  t.is(missing.kind, 'not_found');
  t.deepEqual(
    missing.details.map((detail) => detail.path),
    ['box_logs[1].box_log.smart_key_id', 'box_logs[1].box_log.equipment_id'],
  );
  const unfit = await t.throwsAsync(ingest([good, { ...good, smart_key_id: other.keyId }]), {
    instanceOf: BoxLogRefusal,
  });
  t.is(unfit.kind, 'refused');
  t.deepEqual(unfit.details, [
    { path: 'box_logs[1].box_log.smart_key_id', message: 'is not a smart key of fo_user_id' },
  ]);
  t.is((await store.kysely.selectFrom('box_logs').select('id').execute()).length, 0);
  t.like(await sessionOf(store, d.sessionId), { state: 'entering' });
});

storeTest(
  'the HTTP batches of a group: each checked against its own driver, stored in inserts of at most logsPerInsert logs; a refused one stores nothing, its neighbours are kept',
  async (t, store) => {
    const { deps } = ingestionOn(store, new FakeClock(NOW));
    const w = await world(store, false);
    const d = await driver(store, w);
    const other = await driver(store, w);
    const inserts: number[] = [];
    const rows = deps.ingestStore;
    // Counts the inserts; the store's other methods bound to it (they read its private fields).
    const ingestStore = new Proxy(rows, {
      get: (target, property) => {
        if (property === 'insertLogs')
          return (on: Executor, logs: Parameters<typeof rows.insertLogs>[1]) => {
            inserts.push(logs.length);
            return target.insertLogs(on, logs);
          };
        const value = Reflect.get(target, property) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const batches = new HttpBoxLogBatches({ ...deps, ingestStore }, 3);
    const unverified = (userId: number): BoxLogInput =>
      entry({
        foUserId: userId,
        smartKeyId: null,
        box: w.entrance,
        parkingId: w.parkingId,
        command: null,
        response: null,
      });
    const verified = access(w, w.entrance, d);
    const inputs: HttpBatch[] = [
      { userId: d.userId, entries: [verified, unverified(d.userId)] },
      { userId: d.userId, entries: [unverified(other.userId)] },
      { userId: other.userId, entries: [unverified(other.userId), unverified(other.userId), unverified(other.userId)] },
      { userId: d.userId, entries: [verified, { ...unverified(d.userId), equipment_id: 4242 }] },
      { userId: d.userId, entries: [verified] },
    ];
    const groupsBefore = deps.groupCommit.counters.groups;
    const answers = await Promise.all(inputs.map((input) => deps.groupCommit.runShared(batches, input)));
    t.is(deps.groupCommit.counters.groups - groupsBefore, 1, 'one transaction');
    t.is(deps.groupCommit.ranAlone, 0, 'no batch ran again alone');
    t.deepEqual(inserts, [2, 3, 1], 'the stored batches in inserts of at most 3 logs; the refused ones in none');
    const refusal = (answer: HttpBatchAnswer | undefined) =>
      answer !== undefined && 'refused' in answer
        ? { kind: answer.refused.kind, paths: answer.refused.details.map((detail) => detail.path) }
        : answer;
    t.deepEqual(refusal(answers[1]), { kind: 'refused', paths: ['box_logs[0].box_log.fo_user_id'] });
    t.deepEqual(refusal(answers[3]), { kind: 'not_found', paths: ['box_logs[1].box_log.equipment_id'] });
    const stored = (answer: HttpBatchAnswer | undefined) =>
      answer !== undefined && 'stored' in answer ? answer.stored : [];
    const [first, , third, , last] = answers.map(stored);
    t.like(first, [
      { verified: true, duplicate: false },
      { verified: false, duplicate: false },
    ]);
    t.like(third, [{ verified: false }, { verified: false }, { verified: false }]);
    t.deepEqual(
      last,
      [{ id: first?.[0]?.id, verified: true, duplicate: true }],
      "the first batch's log, met again in a later insert",
    );
    const ids = [...(first ?? []), ...(third ?? [])].map((result) => result.id);
    t.deepEqual(
      (await store.kysely.selectFrom('box_logs').select('id').orderBy('id').execute()).map((row) => row.id),
      ids,
      'the logs of the kept batches, in request order, and nothing of the refused ones',
    );
  },
);

storeTest(
  'a verified OK at the exit box ends the session: end time, final amount, finished once paid',
  async (t, store) => {
    const { deps } = ingestionOn(store, new FakeClock(NOW));
    const w = await world(store);
    const d = await driver(store, w);
    await deps.groupCommit.run((on) =>
      ingestBoxLogs(deps, on, [access(w, w.entrance, d), access(w, w.exit, d, { remaining: 0 })], { source: 'mqtt' }),
    );
    t.like(await sessionOf(store, d.sessionId), {
      state: 'finished',
      end_time: NOW,
      ended_at: NOW,
      amount_minor: 17, // 10 minutes of 1.00 EUR an hour, rounded up
      exit_remaining_tries: 0,
    });
  },
);

storeTest(
  'a verified answer to a sent REVOKE settles its command (done) and moves the box control sequence',
  async (t, store) => {
    const { deps } = ingestionOn(store, new FakeClock(NOW));
    const w = await world(store);
    const box = w.exit;
    // The frame the dispatcher sent: its answer settles the command.
    const frame = command(FrameKind.REVOKE, 41);
    await store.kysely
      .insertInto('control_commands')
      .values({
        module_id: box.moduleId,
        kind: 'REVOKE',
        body: JSON.stringify({ entries: [{ key_id: 5, until: 0 }] }),
        operation: 'op-1',
        purpose: 'revoke',
        parking_id: w.parkingId,
        requested_by: 'test',
        control_seq: 41,
        sent_nonce: frame.subarray(10, 22).toString('hex'),
        in_flight_until: NOW + 30_000,
        next_attempt_at: NOW,
        created_at: NOW,
      })
      .execute();
    const answer = entry({
      foUserId: null,
      smartKeyId: null,
      box,
      parkingId: w.parkingId,
      command: frame,
      response: boxAnswer(box, frame, { status: Status.OK, direction: 0, remaining: 0xff }),
      type: 'control',
    });
    const [stored] = await deps.groupCommit.run((on) => ingestBoxLogs(deps, on, [answer], { source: 'mqtt' }));
    t.like(stored, { verified: true, duplicate: false });
    t.like(await store.kysely.selectFrom('control_commands').selectAll().executeTakeFirst(), {
      state: 'done',
      last_status: 'OK',
      in_flight_until: null,
      finished_at: NOW,
    });
    t.like(
      await store.kysely.selectFrom('boxes').selectAll().where('module_id', '=', box.moduleId).executeTakeFirst(),
      {
        next_control_seq: 42,
        last_control_seq: 41,
      },
    );
  },
);

storeTest(
  'group commit: a failing unit rolls back alone; a shared work that fails runs each input alone; callbacks after the commit',
  async (t, store) => {
    const { deps } = ingestionOn(store, new FakeClock(NOW));
    const group = deps.groupCommit;
    const w = await world(store);
    const d = await driver(store, w);
    const ran: string[] = [];
    const email = (name: string) => `${name}-${store.dialect}@example.org`;
    const addUser = (on: Executor, name: string) =>
      on
        .insertInto('users')
        .values({
          email: email(name),
          password_hash: 'x',
          first_name: name,
          last_name: 'U',
          phone: '+1',
          created_at: NOW,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
    const shared = {
      runAll: async (on: Executor, names: readonly string[]) => {
        const ids: number[] = [];
        for (const name of names) {
          group.afterCommit(() => ran.push(name));
          // A taken email: the unique constraint refuses it.
          ids.push((await addUser(on, name === 'poison' ? 'taken' : name)).id);
        }
        return ids;
      },
    };
    await group.run((on) => addUser(on, 'taken'));
    const outcomes = await Promise.allSettled([
      group.run((on) => ingestBoxLogs(deps, on, [access(w, w.entrance, d)], { source: 'mqtt' })),
      group.run(async (on) => {
        group.afterCommit(() => ran.push('rolled back'));
        await ingestBoxLogs(deps, on, [access(w, w.entrance, d)], { source: 'mqtt' });
        throw new Error('refused after writing');
      }),
      group.runShared(shared, 'a'),
      group.runShared(shared, 'poison'),
      group.runShared(shared, 'b'),
    ]);
    t.deepEqual(
      outcomes.map((outcome) => outcome.status),
      ['fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled'],
    );
    t.is((await store.kysely.selectFrom('box_logs').select('id').execute()).length, 1, 'nothing of the failed unit');
    t.deepEqual(
      (
        await store.kysely
          .selectFrom('users')
          .select('first_name')
          .where('email', 'in', [email('a'), email('b')])
          .orderBy('id')
          .execute()
      ).map((row) => row.first_name),
      ['a', 'b'],
    );
    t.is(group.ranAlone, 3);
    t.deepEqual(ran.sort(), ['a', 'b']);
  },
);

storeTest(
  'MQTT response messages of one turn: one group, one ingestBoxLogs call; a message of no box is counted, not stored',
  async (t, store) => {
    const clock = new FakeClock(NOW);
    const { deps } = ingestionOn(store, clock);
    const w = await world(store);
    const box = w.entrance;
    const responses = await makeVerifiedResponses(
      {
        moduleId: box.moduleId,
        parkingId: w.parkingId,
        direction: box.direction,
        macAddress: box.macAddress,
        parkingKey: Buffer.alloc(16),
        parkingKeyNext: null,
        boxKey: box.boxKey,
        skewSeconds: 120,
        minBatteryMv: 3_300,
        mqtt: null,
      },
      6,
      NOW,
    );
    const ingestion = new ResponseIngestion({ ...deps, clock });
    const calls: number[] = [];
    const insertLogs = deps.ingestStore.insertLogs.bind(deps.ingestStore);
    deps.ingestStore.insertLogs = (on, logs) => (calls.push(logs.length), insertLogs(on, logs));
    await Promise.all([
      ...responses.map((response) => ingestion.ingest(box.moduleId, Buffer.from(response.payload))),
      ingestion.ingest(4242, Buffer.from(responses[0]?.payload ?? '')),
    ]);
    t.deepEqual(calls, [6], 'one insert for the six messages');
    t.is(deps.groupCommit.counters.groups, 1);
    t.like(ingestion.counters, { stored: 6, duplicates: 0, refused: { unknown_box: 1 } });
    const seqs = await store.kysely
      .selectFrom('box_logs')
      .select('box_seq')
      .where('verified', '=', 1)
      .orderBy('box_seq')
      .execute();
    t.deepEqual(
      seqs.map((row) => row.box_seq),
      responses.map((response) => response.boxSeq).sort((a, b) => a - b),
    );
    // A redelivery: each message answered duplicate.
    await Promise.all(responses.map((response) => ingestion.ingest(box.moduleId, Buffer.from(response.payload))));
    t.like(ingestion.counters, { stored: 6, duplicates: 6 });
  },
);

storeTest.on(
  'sqlite',
  'group commit on SQLite (one shared connection): a group completes within one macrotask, before a setImmediate queued at its start; another Kysely query waits for its COMMIT',
  async (t, store) => {
    const { deps } = ingestionOn(store, new FakeClock(NOW));
    const w = await world(store);
    const d = await driver(store, w);
    const order: string[] = [];
    const batch = () => [access(w, w.entrance, d), access(w, w.exit, d, { status: Status.AUTH_FAILED })];
    const units = [1, 2, 3].map((n) =>
      deps.groupCommit.run(async (on) => {
        if (n === 1) {
          setImmediate(() => order.push('setImmediate'));
          // Other code's query on the store's Kysely, started in the group: it must not run inside its transaction.
          void store.kysely
            .selectFrom('box_logs')
            .select('id')
            .execute()
            .then((rows) => order.push(`other query saw ${rows.length}`));
        }
        const results = await ingestBoxLogs(deps, on, batch(), { source: 'mqtt' });
        // A query through Kysely too (the settle's path): its driver's awaits resolve at once as well.
        await sql`SELECT 1`.execute(on);
        deps.groupCommit.afterCommit(() => order.push(`committed ${n}`));
        return results;
      }),
    );
    await Promise.all(units);
    await new Promise((resolve) => setImmediate(resolve));
    t.deepEqual(order, ['committed 1', 'committed 2', 'committed 3', 'other query saw 6', 'setImmediate']);
    t.is(deps.groupCommit.counters.groups, 1);
  },
);

storeTest.serial(
  'two processes ingest the same verified log at once: stored once, the other answers duplicate with its id',
  async (t, store) => {
    const other = secondStore(t, store);
    const w = await world(store);
    const d = await driver(store, w);
    for (let round = 0; round < 5; round += 1) {
      const log = access(w, w.entrance, d);
      const results = await Promise.all(
        [store, other].map((s) => {
          const { deps } = ingestionOn(s, new FakeClock(NOW));
          return deps.groupCommit.run((on) => ingestBoxLogs(deps, on, [log], { source: 'mqtt' }));
        }),
      );
      const [a, b] = results.map((result) => result[0]);
      t.is(a?.id, b?.id, `round ${round}: one id`);
      t.deepEqual([a?.duplicate, b?.duplicate].sort(), [false, true]);
    }
    t.is((await store.kysely.selectFrom('box_logs').select('id').execute()).length, 5);
  },
);

storeTest.serial(
  'two processes ingest the entrance and the exit of one session in the same millisecond: it ends, once',
  async (t, store) => {
    const other = secondStore(t, store);
    const w = await world(store);
    for (let round = 0; round < 5; round += 1) {
      const d = await driver(store, w);
      // The entrance through one process, the exit through the other; which one starts first alternates.
      const logs = [access(w, w.entrance, d), access(w, w.exit, d)];
      const processes = round % 2 === 0 ? [store, other] : [other, store];
      await Promise.all(
        processes.map((s, i) => {
          const { deps } = ingestionOn(s, new FakeClock(NOW));
          return deps.groupCommit.run((on) => ingestBoxLogs(deps, on, [logs[i] as BoxLogInput], { source: 'mqtt' }));
        }),
      );
      const session = await sessionOf(store, d.sessionId);
      t.is(session.state, 'finished', `round ${round}: ended whichever came first (paid: finished)`);
      t.is(session.ended_at, NOW);
      t.is(session.amount_minor, 17);
      t.is(
        (await store.kysely.selectFrom('payments').select('id').where('session_id', '=', d.sessionId).execute()).length,
        1,
        'no second payment',
      );
    }
  },
);

storeTest(
  'a verified exit past what was paid ends the session exiting, with an overstay payment for the difference',
  async (t, store) => {
    const { deps, told } = ingestionOn(store, new FakeClock(NOW));
    const w = await world(store, false);
    // Two hours used of a session that paid its first hour (1.00 EUR an hour).
    const userId = await insertUser(store, NOW);
    const sessionId = await insertSession(store, { userId, parkingId: w.parkingId, startTime: NOW - 7_200_000 });
    await insertPayment(store, { sessionId, amountMinor: 100, createdAt: NOW - 7_200_000 });
    const keyId = (nextKey += 1);
    await insertSmartKey(store, {
      id: keyId,
      userId,
      parkingId: w.parkingId,
      sessionId,
      moduleIds: [w.exit.moduleId],
      startTime: NOW - 7_200_000,
      endTime: NOW + 3_600_000,
    });
    const exit = { ...access(w, w.exit, { userId, keyId }), created_at: '2026-01-01 00:00:00' };
    await deps.groupCommit.run((on) => ingestBoxLogs(deps, on, [exit], { source: 'http', userId }));
    t.like(await sessionOf(store, sessionId), { state: 'exiting', end_time: NOW, amount_minor: 200 });
    const payments = await store.kysely
      .selectFrom('payments')
      .select(['purpose', 'amount_minor', 'state'])
      .where('session_id', '=', sessionId)
      .orderBy('id')
      .execute();
    t.deepEqual(payments, [
      { purpose: 'session', amount_minor: 100, state: 'paid' },
      { purpose: 'overstay', amount_minor: 100, state: 'pending' },
    ]);
    t.true(told.sessions.includes(sessionId));
  },
);

storeTest(
  'a verified answer to the last SET_ISSUER of a set-access operation switches the parking to signed in the same transaction',
  async (t, store) => {
    const { deps } = ingestionOn(store, new FakeClock(NOW));
    const w = await world(store, false);
    const next = { publicKey: 'ab'.repeat(65), privateKey: 'cd'.repeat(32) };
    await store.kysely
      .updateTable('secured_parkings')
      .set({ issuer_next_public_key: next.publicKey, issuer_next_private_key: next.privateKey })
      .where('id', '=', w.parkingId)
      .execute();
    const box = w.entrance;
    // The frame the dispatcher sent: its answer settles the command.
    const frame = command(FrameKind.SET_ISSUER, 7);
    await store.kysely
      .insertInto('control_commands')
      .values({
        module_id: box.moduleId,
        kind: 'SET_ISSUER',
        body: JSON.stringify({ issuer_key: next.publicKey }),
        operation: 'set_access:1',
        purpose: 'set_access',
        parking_id: w.parkingId,
        requested_by: 'test',
        control_seq: 7,
        sent_nonce: frame.subarray(10, 22).toString('hex'),
        in_flight_until: NOW + 30_000,
        next_attempt_at: NOW,
        created_at: NOW,
      })
      .execute();
    const answer = entry({
      foUserId: null,
      smartKeyId: null,
      box,
      parkingId: w.parkingId,
      command: frame,
      response: boxAnswer(box, frame, { status: Status.OK, direction: 0, remaining: 0xff }),
      type: 'control',
    });
    await deps.groupCommit.run((on) => ingestBoxLogs(deps, on, [answer], { source: 'mqtt' }));
    t.like(await store.kysely.selectFrom('control_commands').selectAll().executeTakeFirst(), { state: 'done' });
    t.like(
      await store.kysely
        .selectFrom('secured_parkings')
        .select(['access_mode', 'issuer_public_key', 'issuer_private_key', 'issuer_next_public_key'])
        .where('id', '=', w.parkingId)
        .executeTakeFirst(),
      {
        access_mode: 'signed',
        issuer_public_key: next.publicKey,
        issuer_private_key: next.privateKey,
        issuer_next_public_key: null,
      },
    );
  },
);
