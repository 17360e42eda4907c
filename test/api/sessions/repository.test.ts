// Sessions, payments and smart keys on both stores: the
// repositories, and the races that must hold across processes on
// PostgreSQL (two pools on one database, as two API processes): two
// creations for one driver at once, two finalizes at once, and a payment
// paid while its session is finalized.
import test, { type ExecutionContext } from 'ava';
import { FakeClock } from '../../../lib/fake-clock.js';
import type { Store } from '../../../api/db/store.js';
import { TEST_CARD_SUCCEEDS } from '../../../api/payments/sandbox.js';
import { PaymentRepository } from '../../../api/payments/repository.js';
import { SessionRepository, type NewSession } from '../../../api/sessions/repository.js';
import { SmartKeyRepository, type NewSmartKey } from '../../../api/smart-keys/repository.js';
import { SessionError } from '../../../api/sessions/errors.js';
import { createSession, finalizeSession } from '../../../api/sessions/service.js';
import { secondStore } from '../../helpers/second-store.js';
import { parkingWithBoxes as parkingWithBoxesAt, sessionService } from '../../helpers/session-service.js';
import { insertParking, insertUser } from '../../helpers/store-rows.js';
import { storeTests } from '../../helpers/stores.js';

const storeTest = storeTests(test);
const NOW = Date.UTC(2026, 0, 1);

const session = (userId: number, parkingId: number): NewSession => ({
  userId,
  parkingId,
  startTime: NOW,
  endTime: NOW + 3_600_000,
  tries: 3,
  amountMinor: 100,
  currency: 'EUR',
});

const key = (userId: number, parkingId: number, sessionId: number): NewSmartKey => ({
  userId,
  parkingId,
  sessionId,
  description: 'k',
  purpose: 'session',
  moduleIds: [7],
  startTime: NOW,
  endTime: NOW + 3_600_000,
});

/** The session service over one store, as an API process builds it (test/helpers/session-service.ts). */
function service(store: Store, clock = new FakeClock(NOW)): ReturnType<typeof sessionService> {
  return sessionService(store, clock);
}

/** The other "process": a second pool on PostgreSQL; on SQLite the same
 * store, whose transactions the one connection serializes (a second
 * connection in this process would block the event loop on the write lock
 * while the first transaction awaits). */
function peer(t: ExecutionContext, store: Store): Store {
  return store.dialect === 'sqlite' ? store : secondStore(t, store);
}

/** A parking with an entrance and an exit box. */
function parkingWithBoxes(store: Store): Promise<number> {
  return parkingWithBoxesAt(store, NOW);
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    if (error instanceof SessionError) return error.kind;
    throw error;
  }
}

storeTest('sessions: one open per driver (the index), ended once, finished only from exiting', async (t, store) => {
  const sessions = new SessionRepository(store);
  const userId = await insertUser(store, NOW);
  const parkingId = await insertParking(store, { created_at: NOW });
  const id = await sessions.insert(session(userId, parkingId), NOW);
  if (id === undefined) return t.fail('not inserted');
  t.like(await sessions.findById(id), { state: 'entering', user_id: userId, ended_at: null, created_at: NOW });
  t.is((await sessions.findOpenOfUser(userId))?.id, id);
  t.is(await sessions.insert(session(userId, parkingId), NOW), undefined, 'the driver has an open session');
  t.false(await sessions.finish(id), 'not exiting');
  const end = { state: 'exiting' as const, endTime: NOW + 60_000, amountMinor: 2, exitTries: 3 };
  t.true(await sessions.end(id, end, NOW + 60_000));
  t.false(await sessions.end(id, { ...end, state: 'finished' }, NOW + 120_000), 'ended already');
  t.like(await sessions.findById(id), { state: 'exiting', end_time: NOW + 60_000, amount_minor: 2 });
  await sessions.setTries(id, 1, 2);
  t.true(await sessions.finish(id));
  t.like(await sessions.findById(id), { state: 'finished', entrance_remaining_tries: 1, exit_remaining_tries: 2 });
  t.is(await sessions.findOpenOfUser(userId), undefined);
  t.not(await sessions.insert(session(userId, parkingId), NOW), undefined, 'a finished session is not open');
});

storeTest(
  'payments and smart keys: ids in order, a paid payment never changes, keys revoked once',
  async (t, store) => {
    const sessions = new SessionRepository(store);
    const payments = new PaymentRepository(store);
    const keys = new SmartKeyRepository(store);
    const userId = await insertUser(store, NOW);
    const parkingId = await insertParking(store, { created_at: NOW });
    const sessionId = (await sessions.insert(session(userId, parkingId), NOW)) ?? 0;
    const payment = { sessionId, provider: 'sandbox', purpose: 'session' as const, amountMinor: 100, currency: 'EUR' };
    const first = await payments.insert({ ...payment, token: 't1' }, NOW);
    const second = await payments.insert({ ...payment, token: 't2', purpose: 'overstay' }, NOW);
    t.true(second > first);
    t.like(await payments.findByToken('t2'), { id: second, state: 'pending', purpose: 'overstay' });
    t.true(await payments.setState(first, 'paid', NOW + 1));
    t.false(await payments.setState(first, 'declined', NOW + 2), 'paid stays paid');
    t.deepEqual(
      (await payments.listOfSession(sessionId)).map((row) => [row.id, row.state]),
      [
        [first, 'paid'],
        [second, 'pending'],
      ],
    );

    const one = await keys.insert(key(userId, parkingId, sessionId), NOW);
    const two = await keys.insert(key(userId, parkingId, sessionId), NOW);
    t.deepEqual([one, two], [1, 2], 'the next id after the largest, as SQLite numbers rows');
    await keys.setCommand(two, Buffer.from([1, 2]), 'ab');
    t.like(await keys.latestOf(sessionId), { id: two, signed_by: 'ab', type: 'session_access' });
    t.deepEqual(Buffer.from((await keys.findById(two))?.access_command ?? []), Buffer.from([1, 2]));
    t.deepEqual(
      (await keys.listOfUser(userId)).map((row) => row.id),
      [1, 2],
    );
    t.true(await keys.revoke(one, NOW + 5));
    t.false(await keys.revoke(one, NOW + 6));
    t.is((await keys.findById(one))?.revoked_at, NOW + 5);
  },
);

storeTest('smart keys inserted at once on two connections get distinct ids', async (t, store) => {
  const other = peer(t, store);
  const userId = await insertUser(store, NOW);
  const parkingId = await insertParking(store, { created_at: NOW });
  const sessionId = (await new SessionRepository(store).insert(session(userId, parkingId), NOW)) ?? 0;
  const inserts = [store, other, store, other].map((on) =>
    on.kysely
      .transaction()
      .execute((tx) => new SmartKeyRepository(on).insert(key(userId, parkingId, sessionId), NOW, tx)),
  );
  const ids = await Promise.all(inserts);
  t.deepEqual(
    [...ids].sort((a, b) => a - b),
    [1, 2, 3, 4],
  );
});

storeTest(
  'two creations for one driver at once (two connections): one session, the other refused',
  async (t, store) => {
    const other = peer(t, store);
    const parkingId = await parkingWithBoxes(store);
    for (let round = 0; round < 5; round += 1) {
      const userId = await insertUser(store, NOW);
      const outcomes = await Promise.all([
        refusal(createSession(service(store), userId, parkingId)),
        refusal(createSession(service(other), userId, parkingId)),
      ]);
      t.deepEqual([...outcomes].sort(), ['ok', 'refused'], `round ${round}`);
      const rows = await store.kysely
        .selectFrom('parking_sessions')
        .select('id')
        .where('user_id', '=', userId)
        .execute();
      t.is(rows.length, 1);
      const [row] = rows;
      const keys = await store.kysely
        .selectFrom('smart_keys')
        .select('session_id')
        .where('user_id', '=', userId)
        .execute();
      t.deepEqual(
        keys.map((k) => k.session_id),
        [row?.id],
        'one key, of the session',
      );
    }
  },
);

storeTest('finalize twice at once (two connections): one ends the session, the other is refused', async (t, store) => {
  const other = peer(t, store);
  const parkingId = await parkingWithBoxes(store);
  for (let round = 0; round < 5; round += 1) {
    const userId = await insertUser(store, NOW);
    // Past the window: each finalize would add an overstay payment and an exit key.
    const { session: created } = await createSession(service(store), userId, parkingId);
    const later = NOW + 2 * 3_600_000;
    const outcomes = await Promise.all([
      refusal(finalizeSession(service(store, new FakeClock(later)), userId, created.id)),
      refusal(finalizeSession(service(other, new FakeClock(later)), userId, created.id)),
    ]);
    t.deepEqual([...outcomes].sort(), ['ok', 'refused'], `round ${round}`);
    const payments = await new PaymentRepository(store).listOfSession(created.id);
    t.deepEqual(
      payments.map((payment) => payment.purpose),
      ['session', 'overstay'],
      'one overstay',
    );
    const exitKeys = await store.kysely
      .selectFrom('smart_keys')
      .select('id')
      .where('session_id', '=', created.id)
      .where('purpose', '=', 'exit')
      .execute();
    t.is(exitKeys.length, 1, 'one exit key');
  }
});

storeTest(
  'a payment paid while its session is finalized (two connections): finished, whichever commits first',
  async (t, store) => {
    const other = peer(t, store);
    const parkingId = await parkingWithBoxes(store);
    for (let round = 0; round < 8; round += 1) {
      const userId = await insertUser(store, NOW);
      const { session: created } = await createSession(service(store), userId, parkingId);
      const [payment] = await new PaymentRepository(store).listOfSession(created.id);
      if (payment === undefined) return t.fail('no payment');
      // Within the window: the session payment covers the minutes used, so paid means finished.
      const within = new FakeClock(NOW + 10 * 60_000);
      const payer = service(round % 2 === 0 ? store : other, within);
      const finalizer = service(round % 2 === 0 ? other : store, within);
      const [page, ended] = await Promise.all([
        payer.provider.callback(payment.token, { action: 'pay', card_number: TEST_CARD_SUCCEEDS, expiry: '12/40' }),
        finalizeSession(finalizer, userId, created.id),
      ]);
      t.is(page.status, 200);
      t.is(ended.extraMinor, 0);
      t.is((await new SessionRepository(store).findById(created.id))?.state, 'finished', `round ${round}`);
    }
  },
);
