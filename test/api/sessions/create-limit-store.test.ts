// The token bucket of each driver's session creations
// (api/sessions/create-limit.ts) on both stores: a burst at once, then one
// token back per interval; each driver its own; and two processes taking
// from one bucket at once (two pools on PostgreSQL) never take more than it
// holds.
import test from 'ava';
import { SessionCreateLimiter, sessionCreateLimitsOf } from '../../../api/sessions/create-limit.js';
import type { Store } from '../../../api/db/store.js';
import { secondStore } from '../../helpers/second-store.js';
import { insertUser } from '../../helpers/store-rows.js';
import { storeTests } from '../../helpers/stores.js';

const storeTest = storeTests(test);
const NOW = Date.UTC(2026, 0, 1);
const LIMITS = { burst: 3, intervalMs: 2_000 };

function limiterOn(store: Store, limits = LIMITS): SessionCreateLimiter {
  return new SessionCreateLimiter(store.dialect, store.kysely, limits);
}

/** One take in a transaction of its own, as a creation takes it. */
function take(store: Store, limiter: SessionCreateLimiter, userId: number, nowMs: number): Promise<number> {
  return store.kysely.transaction().execute((tx) => limiter.take(tx, userId, nowMs));
}

test('SESSION_CREATE_RATE_PER_MINUTE gives the interval, rounded up to a whole ms', (t) => {
  t.deepEqual(sessionCreateLimitsOf({ sessionCreateBurst: 20, sessionCreateRatePerMinute: 30 }), {
    burst: 20,
    intervalMs: 2_000,
  });
  t.is(sessionCreateLimitsOf({ sessionCreateBurst: 1, sessionCreateRatePerMinute: 7 }).intervalMs, 8_572);
});

storeTest(
  'a burst at once, then one per interval, the wait until the next; another driver has a bucket of its own',
  async (t, store) => {
    const limiter = limiterOn(store);
    const driver = await insertUser(store, NOW);
    const other = await insertUser(store, NOW);
    for (let n = 0; n < LIMITS.burst; n += 1) t.is(await take(store, limiter, driver, NOW), 0, `token ${n + 1}`);
    t.is(await take(store, limiter, driver, NOW), 2_000, 'empty: one back in an interval');
    t.is(await take(store, limiter, driver, NOW + 1_500), 500, 'a refusal takes nothing');
    t.is(await take(store, limiter, other, NOW), 0, 'the other driver');
    t.is(await take(store, limiter, driver, NOW + 2_000), 0, 'one back');
    t.is(await take(store, limiter, driver, NOW + 2_000), 2_000);
    // Long after, the bucket is full again, never fuller.
    const later = NOW + 3_600_000;
    for (let n = 0; n < LIMITS.burst; n += 1) t.is(await take(store, limiter, driver, later), 0);
    t.is(await take(store, limiter, driver, later), 2_000);
    const rows = await store.kysely.selectFrom('session_create_limits').selectAll().orderBy('user_id').execute();
    t.deepEqual(rows, [
      { user_id: driver, full_at: later + 3 * 2_000 },
      { user_id: other, full_at: NOW + 2_000 },
    ]);
  },
);

storeTest('a take rolled back with its transaction gives its token back', async (t, store) => {
  const limiter = limiterOn(store, { burst: 1, intervalMs: 2_000 });
  const driver = await insertUser(store, NOW);
  await t.throwsAsync(
    store.kysely.transaction().execute(async (tx) => {
      t.is(await limiter.take(tx, driver, NOW), 0);
      throw new Error('the creation failed after it');
    }),
    { message: 'the creation failed after it' },
  );
  t.is(await take(store, limiter, driver, NOW), 0, 'the token is still there');
  t.is(await take(store, limiter, driver, NOW), 2_000);
});

storeTest('two processes taking from one bucket at once take at most what it holds', async (t, store) => {
  // On SQLite the same connection: a second one in this process would block
  // the event loop on the write lock while a transaction awaits; SQLite's
  // one writer serializes the takes of two processes alike.
  const other = store.dialect === 'sqlite' ? store : secondStore(t, store);
  const limiters = [limiterOn(store), limiterOn(other)];
  for (let round = 0; round < 3; round += 1) {
    const driver = await insertUser(store, NOW);
    const waits = await Promise.all(
      Array.from({ length: 10 }, (_, n) => {
        const on = n % 2 === 0 ? store : other;
        return take(on, limiters[n % 2] as SessionCreateLimiter, driver, NOW);
      }),
    );
    t.is(waits.filter((wait) => wait === 0).length, LIMITS.burst, `round ${round}: ${waits.join(', ')}`);
  }
});
