// The operator's reads on both stores: GET /api/operator/sessions,
// /box_logs and /parkings as api/operators/ gives them (operatorSessions,
// operatorBoxLogs, operatorParkings, lastResponseOf), on rows seeded through
// the store.
import test from 'ava';
import { revokeSmartKey, setAccessSigned } from '../../../api/control/operations.js';
import { intervene } from '../../../api/control/interventions.js';
import { LiveBoxStates } from '../../../api/events/live-states.js';
import { StreamRenderer } from '../../../api/operators/stream/render.js';
import type { Store } from '../../../api/db/store.js';
import { operatorParkings } from '../../../api/operators/box-entries.js';
import { lastResponseOf, operatorBoxLogs, operatorSessions } from '../../../api/operators/views.js';
import { Status } from '../../../firmware-protocol/index.js';
import { insertBox, insertParking, insertSmartKey } from '../../helpers/store-rows.js';
import { storeTests } from '../../helpers/stores.js';

const storeTest = storeTests(test);

const NOW = Date.UTC(2026, 10, 23, 12);

interface Seeded {
  parkingId: number;
  otherParking: number;
  userId: number;
  sessions: number[];
}

async function seed(store: Store): Promise<Seeded> {
  const parkingId = await insertParking(store, { parking_key: '22'.repeat(16), created_at: NOW });
  const otherParking = await insertParking(store, { parking_key: '22'.repeat(16), created_at: NOW });
  await insertBox(store, { moduleId: 101, parkingId, createdAt: NOW });
  await insertBox(store, { moduleId: 102, parkingId, createdAt: NOW });
  const userOf = async (email: string) =>
    (
      await store.kysely
        .insertInto('users')
        .values({ email, password_hash: 'x', first_name: 'Ada', last_name: 'L', phone: '+33', created_at: NOW })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
  const userId = await userOf('ada@example.test');
  // One open session a driver: the entering one is another's.
  const otherUser = await userOf('bob@example.test');
  const sessions: number[] = [];
  for (const [parking, state, user] of [
    [parkingId, 'finished', userId],
    [parkingId, 'active', userId],
    [otherParking, 'entering', otherUser],
  ] as const) {
    const row = await store.kysely
      .insertInto('parking_sessions')
      .values({
        user_id: user,
        parking_id: parking,
        state,
        start_time: NOW,
        end_time: NOW + 3_600_000,
        entrance_remaining_tries: 3,
        exit_remaining_tries: 2,
        amount_minor: 150,
        currency: 'EUR',
        ended_at: state === 'finished' ? NOW + 60_000 : null,
        created_at: NOW,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    sessions.push(row.id);
  }
  // The active session's keys, inserted out of order; an operator's key.
  for (const id of [9, 3]) {
    await insertSmartKey(store, { id, parkingId, moduleIds: [101], startTime: NOW, endTime: NOW + 60_000 });
    await store.kysely
      .updateTable('smart_keys')
      .set({ purpose: 'session', user_id: userId, session_id: sessions[1] ?? 0 })
      .where('id', '=', id)
      .execute();
  }
  const { id: operatorId } = await store.kysely
    .insertInto('operators')
    .values({ name: 'olga', token_hash: Buffer.alloc(32), created_at: NOW })
    .returning('id')
    .executeTakeFirstOrThrow();
  await insertSmartKey(store, { id: 20, parkingId, moduleIds: [102], startTime: NOW, endTime: NOW + 60_000 });
  await store.kysely.updateTable('smart_keys').set({ operator_id: operatorId }).where('id', '=', 20).execute();
  return { parkingId, otherParking, userId, sessions };
}

/** Box logs, oldest first: [module, smart key, verified, box_seq, status, source]. */
const LOGS = [
  [101, 9, 1, 5, Status.OK, 'http'],
  [101, 3, 0, null, null, 'http'],
  [102, 20, 1, 7, Status.OK, 'mqtt'],
  [101, null, 1, 4, Status.REPLAY, 'mqtt'],
  [101, 9, 1, 6, Status.OK, 'mqtt'],
] as const;

async function insertLogs(store: Store, parkingId: number, userId: number): Promise<number[]> {
  const ids: number[] = [];
  for (const [index, [moduleId, keyId, verified, boxSeq, status, source]] of LOGS.entries()) {
    const row = await store.kysely
      .insertInto('box_logs')
      .values({
        source,
        fo_user_id: keyId === 20 ? null : userId,
        smart_key_id: keyId,
        equipment_id: moduleId,
        secured_parking_id: parkingId,
        type: 'in',
        command: null,
        command_decrypted: null,
        response: null,
        response_decrypted: null,
        offline: 0,
        created_at: '2026-11-23 12:00:00',
        latitude: null,
        longitude: null,
        verified,
        box_seq: boxSeq,
        status,
        received_at: NOW + index * 1000,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    ids.push(row.id);
  }
  return ids;
}

storeTest(
  'operatorSessions: newest first, by state and parking, with the smart keys in ascending order',
  async (t, store) => {
    const { parkingId, otherParking, userId, sessions } = await seed(store);
    const all = await operatorSessions(store, { limit: 10 });
    t.deepEqual(
      all.map((session) => session.id),
      [...sessions].reverse(),
    );
    t.deepEqual(all[1], {
      id: sessions[1] ?? 0,
      user_id: userId,
      email: 'ada@example.test',
      first_name: 'Ada',
      last_name: 'L',
      parking_id: parkingId,
      state: 'active',
      start_time: new Date(NOW).toISOString(),
      end_time: new Date(NOW + 3_600_000).toISOString(),
      entrance_remaining_tries: 3,
      exit_remaining_tries: 2,
      amount: '1.50',
      currency: 'EUR',
      ended_at: null,
      smart_key_ids: [3, 9],
    });
    t.deepEqual(all[2]?.smart_key_ids, []);
    t.is(all[2]?.ended_at, new Date(NOW + 60_000).toISOString());
    t.deepEqual(
      (await operatorSessions(store, { limit: 10, parkingId })).map((session) => session.id),
      [sessions[1], sessions[0]],
    );
    t.deepEqual(
      (await operatorSessions(store, { limit: 10, state: 'entering' })).map((session) => session.parking_id),
      [otherParking],
    );
    t.is((await operatorSessions(store, { limit: 1 })).length, 1);
    await t.throwsAsync(() => operatorSessions(store, { limit: 10, parkingId: 999 }), {
      message: 'no secured parking with id 999',
    });
  },
);

storeTest('operatorBoxLogs: newest first, a page at a time by cursor, filtered', async (t, store) => {
  const { parkingId, userId, sessions } = await seed(store);
  const ids = await insertLogs(store, parkingId, userId);
  const first = await operatorBoxLogs(store, { limit: 2 });
  t.deepEqual(
    first.box_logs.map((log) => log.id),
    [ids[4], ids[3]],
  );
  t.not(first.next_cursor, null);
  const second = await operatorBoxLogs(store, { limit: 2, beforeId: ids[3] ?? 0 });
  t.deepEqual(
    second.box_logs.map((log) => log.id),
    [ids[2], ids[1]],
  );
  const last = await operatorBoxLogs(store, { limit: 2, beforeId: ids[1] ?? 0 });
  t.deepEqual(
    last.box_logs.map((log) => log.id),
    [ids[0]],
  );
  t.is(last.next_cursor, null);
  t.like(second.box_logs[0], {
    source: 'mqtt',
    equipment_id: 102,
    smart_key_id: 20,
    session_id: null,
    key_purpose: 'operator',
    operator: 'olga',
    offline: false,
    verified: true,
    box_seq: 7,
    status: 'OK',
    received_at: new Date(NOW + 2000).toISOString(),
  });
  t.like(second.box_logs[1], { verified: false, status: null, key_purpose: 'session', session_id: sessions[1] });
  const ofIds = async (filter: Parameters<typeof operatorBoxLogs>[1]) =>
    (await operatorBoxLogs(store, filter)).box_logs.map((log) => log.id);
  t.deepEqual(await ofIds({ limit: 10, moduleId: 102 }), [ids[2]]);
  t.deepEqual(await ofIds({ limit: 10, sessionId: sessions[1] ?? 0 }), [ids[4], ids[1], ids[0]]);
  t.deepEqual(await ofIds({ limit: 10, verified: false }), [ids[1]]);
  t.deepEqual(await ofIds({ limit: 10, status: 'REPLAY' }), [ids[3]]);
  t.deepEqual(await ofIds({ limit: 10, status: 'OK', moduleId: 101 }), [ids[4], ids[0]]);
});

storeTest(
  "operatorParkings and lastResponseOf: each box's newest verified response by box_seq, pending commands, empty parkings",
  async (t, store) => {
    const { parkingId, otherParking, userId } = await seed(store);
    const ids = await insertLogs(store, parkingId, userId);
    await setAccessSigned({ store }, parkingId, { force: false }, NOW, 'test');
    const parkings = await operatorParkings(store, NOW);
    t.deepEqual(
      parkings.map((parking) => [parking.id, parking.boxes.map((box) => box.module_id)]),
      [
        [parkingId, [101, 102]],
        [otherParking, []],
      ],
    );
    const [box101, box102] = parkings[0]?.boxes ?? [];
    t.like(box101?.last_response, { box_log_id: ids[4], via: 'mqtt', received_at: new Date(NOW + 4000).toISOString() });
    t.like(box102?.last_response, { box_log_id: ids[2], via: 'mqtt' });
    t.deepEqual(await lastResponseOf(store, 101), box101?.last_response ?? null);
    t.is(await lastResponseOf(store, 999), null);
    t.like(box101, { availability: 'unknown', mac_address: '02:00:00:00:00:65' });
    t.like(box101?.pending_control_commands[0], { kind: 'SET_ISSUER', purpose: 'set_access' });
  },
);

storeTest(
  'a box that still takes a revoked key (its REVOKE skipped): its entry in GET /api/operator/parkings, the snapshot and a flush carries the key and the remedy; the other box [] and null, and so does the at-risk one once the key has expired',
  async (t, store) => {
    const { parkingId } = await seed(store);
    // Key 9 opens box 101 until NOW + 60 s; box 101's skew is 120 s.
    const revoked = await revokeSmartKey({ store }, 9, NOW, 'test');
    t.is(revoked.pending, 1);
    const [command] = await store.kysely
      .selectFrom('control_commands')
      .select('id')
      .where('module_id', '=', 101)
      .execute();
    await intervene(store, command?.id ?? 0, 'skip', NOW, 'test');

    const openUntil = new Date(NOW + 60_000 + 120_000).toISOString();
    const atRisk = {
      revocations_missing: [
        {
          smart_key_id: 9,
          open_until: openUntil,
          last_error: 'skipped by test: box 101 may not hold what the REVOKE carried',
        },
      ],
      remedy:
        'a sealed parking cannot take its keys back: the revoked keys open this box until they expire; move the parking to signed (admin parking set-access --access signed)',
    };
    const noRisk = { revocations_missing: [], remedy: null };
    const [parking] = await operatorParkings(store, NOW);
    t.is(parking?.id, parkingId);
    t.like(parking?.boxes[0], { module_id: 101, ...atRisk });
    t.like(parking?.boxes[1], { module_id: 102, ...noRisk });

    const renderer = new StreamRenderer(store, new LiveBoxStates());
    const snapshot = await renderer.snapshot(NOW);
    t.deepEqual(
      snapshot.parkings[0]?.boxes.map((box) => [box.module_id, box.revocations_missing, box.remedy]),
      [
        [101, atRisk.revocations_missing, atRisk.remedy],
        [102, [], null],
      ],
    );
    const flushed = await renderer.render({ boxes: [101, 102], sessions: [], parkings: [] }, NOW);
    t.like(flushed.boxes.get(101), atRisk);
    t.like(flushed.boxes.get(102), noRisk);

    // Past its end and the box's skew the box refuses the key itself.
    const later = NOW + 180_001;
    t.like((await operatorParkings(store, later))[0]?.boxes[0], noRisk);
    t.like((await renderer.render({ boxes: [101], sessions: [], parkings: [] }, later)).boxes.get(101), noRisk);
  },
);
