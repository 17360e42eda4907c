// A session's creation on each engine (api/sessions/creation*.ts): the rows
// it answers and reads are the rows stored; a refusal at the write (the bucket emptied
// or the session refused by the one-open-session index after the read saw
// neither) writes no session, key or payment; many creations of one driver
// at once on two stores make one session. On PostgreSQL, where the read
// takes the ids the write uses: a refused creation takes none, ids taken but
// not written are gaps and never rows, and a key id a row took meanwhile
// makes the write run again with fresh ids, its token taken once.
import test from 'ava';
import { BoxRepository } from '../../../api/boxes/repository.js';
import type { Store } from '../../../api/db/store.js';
import { ParkingRepository } from '../../../api/parkings/repository.js';
import { PaymentRepository } from '../../../api/payments/repository.js';
import type { PreparedCreation } from '../../../api/sessions/creation.js';
import { SessionCreateLimited, SessionError } from '../../../api/sessions/errors.js';
import { SessionRepository } from '../../../api/sessions/repository.js';
import { createSession } from '../../../api/sessions/service.js';
import { SmartKeyRepository } from '../../../api/smart-keys/repository.js';
import { FakeClock } from '../../../lib/fake-clock.js';
import { secondStore } from '../../helpers/second-store.js';
import { parkingWithBoxes, sessionService } from '../../helpers/session-service.js';
import { column } from '../../helpers/sql.js';
import { insertParking, insertSmartKey, insertUser } from '../../helpers/store-rows.js';
import { storeTests } from '../../helpers/stores.js';

const storeTest = storeTests(test);
const NOW = Date.UTC(2026, 0, 1);
const LIMITS = { burst: 20, intervalMs: 2_000 };

async function prepared(store: Store, parkingId: number, userId: number, burst = LIMITS.burst) {
  const creation = await sessionService(store, new FakeClock(NOW), { ...LIMITS, burst }).sessionCreation.prepare(
    parkingId,
    userId,
  );
  if (creation === undefined) throw new Error('no parking');
  return creation;
}

async function written(creation: PreparedCreation) {
  const rows = await creation.write();
  if (rows === undefined) throw new Error('not written');
  return rows;
}

/** The ids of each table a creation writes, and the driver's bucket. */
async function rowsOf(store: Store) {
  return {
    sessions: await column<number>(store, 'SELECT id FROM parking_sessions ORDER BY id'),
    keys: await column<number>(store, 'SELECT id FROM smart_keys ORDER BY id'),
    keySessions: await column<number | null>(store, 'SELECT session_id FROM smart_keys ORDER BY id'),
    payments: await column<number>(store, 'SELECT session_id FROM payments ORDER BY id'),
    buckets: await column<number>(store, 'SELECT full_at FROM session_create_limits ORDER BY user_id'),
  };
}

async function outcome(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'created';
  } catch (error) {
    if (error instanceof SessionCreateLimited) return 'limited';
    if (error instanceof SessionError) return error.kind;
    throw error;
  }
}

storeTest('the rows a creation answers are the rows stored', async (t, store) => {
  const parkingId = await parkingWithBoxes(store, NOW);
  const userId = await insertUser(store, NOW);
  const created = await createSession(sessionService(store, new FakeClock(NOW + 1_234)), userId, parkingId);
  t.deepEqual(created.session, await new SessionRepository(store).findById(created.session.id));
  t.deepEqual(created.key, await new SmartKeyRepository(store).findById(created.key.id));
  t.deepEqual([created.payment], await new PaymentRepository(store).listOfSession(created.session.id));
  t.deepEqual(created.parking, await new ParkingRepository(store).findById(parkingId));
  t.deepEqual(created.boxes, await new BoxRepository(store).listOfParking(parkingId));
  t.like(created.session, { user_id: userId, state: 'entering', start_time: NOW + 1_000, created_at: NOW + 1_234 });
  t.like(created.key, { session_id: created.session.id, module_ids: '[1,2]', signed_by: null });
  t.like(created.payment, { session_id: created.session.id, state: 'pending', amount_minor: 100 });
});

storeTest(
  'the bucket emptied between the read and the write: refused with its wait, nothing of it written',
  async (t, store) => {
    const parkingId = await parkingWithBoxes(store, NOW);
    const userId = await insertUser(store, NOW);
    // Both read a full bucket of one token and no open session.
    const first = await prepared(store, parkingId, userId, 1);
    const second = await prepared(store, parkingId, userId, 1);
    const { session, key } = await written(first);
    // Finished at once: only the bucket stands in the second's way.
    await store.kysely.updateTable('parking_sessions').set({ state: 'finished' }).execute();
    const refusal = await t.throwsAsync(second.write(), { instanceOf: SessionCreateLimited });
    t.is(refusal.retryAfterMs, LIMITS.intervalMs);
    t.deepEqual(await rowsOf(store), {
      sessions: [session.id],
      keys: [key.id],
      keySessions: [session.id],
      payments: [session.id],
      buckets: [NOW + LIMITS.intervalMs],
    });
  },
);

storeTest(
  'the session refused by the one-open-session index after the read saw none: no session, key or payment of it',
  async (t, store) => {
    const parkingId = await parkingWithBoxes(store, NOW);
    const userId = await insertUser(store, NOW);
    const first = await prepared(store, parkingId, userId);
    const second = await prepared(store, parkingId, userId);
    const { session, key } = await written(first);
    t.is(await second.write(), undefined);
    const rows = await rowsOf(store);
    t.deepEqual(rows.sessions, [session.id]);
    t.deepEqual(rows.keys, [key.id]);
    t.deepEqual(rows.payments, [session.id]);
    // As in one transaction on SQLite: the refused creation took its token.
    t.deepEqual(rows.buckets, [NOW + 2 * LIMITS.intervalMs]);

    // The next creation's rows follow; on PostgreSQL the refused one's ids are gaps, never rows.
    const other = await insertUser(store, NOW);
    const next = await written(await prepared(store, parkingId, other));
    const gap = store.dialect === 'postgres' ? 2 : 1;
    t.is(next.key.id, key.id + gap);
    t.is(next.session.id, session.id + gap);
    t.deepEqual((await rowsOf(store)).keys, [key.id, next.key.id]);
  },
);

storeTest(
  'six creations of one driver at once on two stores: one session, its key and its payment',
  async (t, store) => {
    // On SQLite the same store: a second connection in this process would block the event loop on the write lock.
    const other = store.dialect === 'sqlite' ? store : secondStore(t, store);
    const parkingId = await parkingWithBoxes(store, NOW);
    for (let round = 0; round < 3; round += 1) {
      const userId = await insertUser(store, NOW);
      const outcomes = await Promise.all(
        Array.from({ length: 6 }, (_, n) =>
          outcome(createSession(sessionService(n % 2 === 0 ? store : other, new FakeClock(NOW)), userId, parkingId)),
        ),
      );
      t.deepEqual(
        [...outcomes].sort(),
        ['created', 'refused', 'refused', 'refused', 'refused', 'refused'],
        `round ${round}`,
      );
      const sessions = await column<number>(store, 'SELECT id FROM parking_sessions WHERE user_id = ?', userId);
      t.is(sessions.length, 1);
      t.deepEqual(await column(store, 'SELECT session_id FROM smart_keys WHERE user_id = ?', userId), sessions);
      t.deepEqual(
        await column(
          store,
          'SELECT p.session_id FROM payments p JOIN parking_sessions s ON s.id = p.session_id WHERE s.user_id = ?',
          userId,
        ),
        sessions,
      );
    }
  },
);

storeTest.on(
  'postgres',
  'a creation refused by its read takes no ids (PostgreSQL: the read takes them)',
  async (t, store) => {
    const parkingId = await parkingWithBoxes(store, NOW);
    const inactive = await insertParking(store, { created_at: NOW, is_active: 0 });
    const userId = await insertUser(store, NOW);
    const service = sessionService(store, new FakeClock(NOW), { ...LIMITS, burst: 1 });
    const first = await createSession(service, userId, parkingId);
    t.is(await outcome(createSession(service, userId, parkingId)), 'refused', 'an open session');
    await store.kysely.updateTable('parking_sessions').set({ state: 'finished' }).execute();
    t.is(await outcome(createSession(service, userId, inactive)), 'refused', 'an inactive parking');
    t.is(await outcome(createSession(service, userId, parkingId)), 'limited', 'an empty bucket');
    const next = await createSession(service, await insertUser(store, NOW), parkingId);
    t.is(next.session.id, first.session.id + 1);
    t.is(next.key.id, first.key.id + 1);
  },
);

storeTest.on(
  'postgres',
  'a key id a row took after the read (PostgreSQL): written again with fresh ids, one token taken',
  async (t, store) => {
    const parkingId = await parkingWithBoxes(store, NOW);
    const userId = await insertUser(store, NOW);
    const creation = await prepared(store, parkingId, userId);
    // The read took key id 1 (an empty table, a new sequence); a key written with its own id takes it first.
    await insertSmartKey(store, { id: 1, parkingId, moduleIds: [1], startTime: NOW });
    const { session, key } = await written(creation);
    t.is(key.id, 2);
    t.is(key.session_id, session.id);
    t.deepEqual(await rowsOf(store), {
      sessions: [session.id],
      keys: [1, 2],
      keySessions: [null, session.id],
      payments: [session.id],
      buckets: [NOW + LIMITS.intervalMs],
    });
  },
);
