// The failed-login limiter (api/auth/login-limiter.ts) on both stores: the
// limits per username and per address with attempts in flight counting, the
// window sliding on an injected clock, Retry-After from failures only, an
// abandoned attempt, the rows pruned and capped; on PostgreSQL, the lock wait
// bounded and a burst holding one pool connection at the lock; and two API
// processes (test/fixtures/login-burst.ts), each a limiter on its own
// connection to one database, sharing the counts, so a concurrent burst split
// over both passes exactly the limit. Real processes, not two connections in
// this one: on SQLite a connection waiting for the write lock blocks its
// thread, and the other connection could never commit.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import test, { type ExecutionContext } from 'ava';
import { sql } from 'kysely';
import {
  ADVISORY_LOCK_CLASS,
  LoginLimiter,
  loginLockKeys,
  MAX_LOGIN_MS,
  PRUNE_EVERY_MS,
  type LoginAttempt,
  type LoginLimits,
} from '../../../api/auth/login-limiter.js';
import { isDatabaseBusy } from '../../../api/db/busy.js';
import type { Store } from '../../../api/db/store.js';
import { FakeClock } from '../../../lib/fake-clock.js';
import { storeTests } from '../../helpers/stores.js';
import { waitFor } from '../../helpers/wait.js';

const storeTest = storeTests(test);
const fixture = fileURLToPath(new URL('../../fixtures/login-burst.ts', import.meta.url));

async function started(limiter: LoginLimiter, username: string, address: string): Promise<LoginAttempt> {
  const attempt = await limiter.begin(username, address);
  if ('retryAfterSeconds' in attempt) throw new Error(`limited for ${attempt.retryAfterSeconds} s`);
  return attempt;
}

async function rows(store: Store): Promise<number> {
  const { count } = await store.kysely
    .selectFrom('login_attempts')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return count;
}

/** The store's database as another process opens it: SQLite's file, or a URL of the PostgreSQL database. */
function databaseOf(store: Store): string {
  if (store.dialect === 'sqlite') return store.sqlite.name;
  const options = store.pool.options;
  const url = new URL('postgres://localhost');
  url.hostname = String(options.host);
  url.port = String(options.port);
  url.pathname = `/${String(options.database)}`;
  url.username = String(options.user);
  if (typeof options.password === 'string') url.password = options.password;
  return url.toString();
}

/** Starts test/fixtures/login-burst.ts; resolves once it is ready, with a
 * function that starts its bursts and resolves with what passed. */
async function burstProcess(
  t: ExecutionContext,
  args: string[],
): Promise<() => Promise<{ username: number; address: number }[]>> {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  t.teardown(() => {
    if (child.exitCode === null) child.kill();
  });
  const lines = createInterface({ input: child.stdout });
  const next = () =>
    new Promise<string>((resolve, reject) => {
      lines.once('line', resolve);
      child.once('exit', (code) => reject(new Error(`the burst process ended (${String(code)}) before its answer`)));
    });
  t.is(await next(), 'ready');
  return async () => {
    const answer = next();
    child.stdin.end('go\n');
    return JSON.parse(await answer) as { username: number; address: number }[];
  };
}

storeTest(
  'attempts in flight hold their slots; a success clears failures, not others still in flight',
  async (t, store) => {
    const clock = new FakeClock();
    const limiter = new LoginLimiter(
      store,
      { maxFailuresPerUsername: 2, maxFailuresPerAddress: 10, windowMs: 60_000 },
      clock,
    );
    const inFlight = await started(limiter, 'a@example.com', '192.0.2.1');
    const failing = await started(limiter, 'A@example.com ', '192.0.2.2');
    t.is(
      await limiter.retryAfterSeconds('a@example.com', '192.0.2.3'),
      1,
      'two in flight fill the username limit: a second, since they are no failures yet',
    );
    await failing.failed();
    await inFlight.succeeded();
    // The success cleared the failure and gave its own slot back.
    const third = await started(limiter, 'a@example.com', '192.0.2.1');
    const fourth = await started(limiter, 'a@example.com', '192.0.2.1');
    t.is(await limiter.retryAfterSeconds('a@example.com', '192.0.2.1'), 1);
    // A success now clears failures but leaves the attempt still in flight.
    await fourth.failed();
    await (await started(limiter, 'other@example.com', '192.0.2.1')).succeeded();
    t.is(await limiter.retryAfterSeconds('a@example.com', '192.0.2.1'), 1, 'another username does not clear this one');
    await third.abandon();
    t.is(await limiter.retryAfterSeconds('a@example.com', '192.0.2.1'), 0, 'an abandoned attempt gives its slot back');
    await third.failed();
    t.is(await limiter.retryAfterSeconds('a@example.com', '192.0.2.1'), 0, 'an attempt ends once');
  },
);

storeTest('the address limit counts attempts in flight across usernames', async (t, store) => {
  const clock = new FakeClock();
  const limiter = new LoginLimiter(
    store,
    { maxFailuresPerUsername: 10, maxFailuresPerAddress: 3, windowMs: 900_000 },
    clock,
  );
  const attempts = await Promise.all([0, 1, 2].map((i) => started(limiter, `user${i}@example.com`, '198.51.100.1')));
  t.deepEqual(await limiter.begin('user9@example.com', '198.51.100.1'), { retryAfterSeconds: 1 });
  await attempts[0]?.succeeded();
  await attempts[1]?.failed();
  await attempts[2]?.failed();
  clock.advance(1000);
  await (await started(limiter, 'user9@example.com', '198.51.100.1')).failed();
  t.deepEqual(
    await limiter.begin('user0@example.com', '198.51.100.1'),
    { retryAfterSeconds: 899 },
    'a success does not clear its address',
  );
});

storeTest(
  'the window slides on the clock: Retry-After until the oldest counted failure leaves it',
  async (t, store) => {
    const clock = new FakeClock();
    const limiter = new LoginLimiter(
      store,
      { maxFailuresPerUsername: 3, maxFailuresPerAddress: 100, windowMs: 60_000 },
      clock,
    );
    for (let i = 0; i < 3; i += 1) {
      await (await started(limiter, 'driver@example.com', `10.0.0.${i}`)).failed();
      clock.advance(10_000);
    }
    // Failures at 0, 10 and 20 s; now 30 s: room when the first leaves, at 60 s.
    t.deepEqual(await limiter.begin('driver@example.com', '10.0.0.9'), { retryAfterSeconds: 30 });
    clock.advance(29_999);
    t.is(await limiter.retryAfterSeconds('Driver@Example.com', '10.0.0.9'), 1, 'a part of a second is a second');
    clock.advance(1);
    const fourth = await started(limiter, 'driver@example.com', '10.0.0.9');
    t.is(
      await limiter.retryAfterSeconds('driver@example.com', '10.0.0.9'),
      1,
      'full again with the fourth in flight, which is no failure yet',
    );
    await fourth.failed();
    t.is(
      await limiter.retryAfterSeconds('driver@example.com', '10.0.0.9'),
      10,
      'the fourth failed: the next room when the failure at 10 s leaves, at 70 s',
    );
    clock.advance(60_000);
    t.is(await limiter.retryAfterSeconds('driver@example.com', '10.0.0.9'), 0, 'all out of the window');
  },
);

storeTest(
  'Retry-After counts failures only: attempts in flight filling the limit make it 1 s; once they fail, until the oldest counted failure leaves the window',
  async (t, store) => {
    const clock = new FakeClock();
    const limiter = new LoginLimiter(
      store,
      { maxFailuresPerUsername: 3, maxFailuresPerAddress: 100, windowMs: 60_000 },
      clock,
    );
    await (await started(limiter, 'driver@example.com', '10.0.0.1')).failed();
    clock.advance(10_000);
    const first = await started(limiter, 'driver@example.com', '10.0.0.2');
    const second = await started(limiter, 'driver@example.com', '10.0.0.3');
    t.deepEqual(
      await limiter.begin('driver@example.com', '10.0.0.4'),
      { retryAfterSeconds: 1 },
      'one failure and two in flight: full, but either may end without failing within a login',
    );
    await first.failed();
    t.is(await limiter.retryAfterSeconds('driver@example.com', '10.0.0.4'), 1, 'two failures and one in flight');
    await second.failed();
    t.deepEqual(
      await limiter.begin('driver@example.com', '10.0.0.4'),
      { retryAfterSeconds: 50 },
      'three failures: room when the one at 0 s leaves the window, at 60 s',
    );
  },
);

storeTest(
  'an attempt in flight past MAX_LOGIN_MS (its process died) stops counting; failing late, it counts again',
  async (t, store) => {
    const clock = new FakeClock();
    const limits = { maxFailuresPerUsername: 1, maxFailuresPerAddress: 100, windowMs: 900_000 };
    const limiter = new LoginLimiter(store, limits, clock);
    const slow = await started(limiter, 'driver@example.com', '10.0.0.1');
    clock.advance(MAX_LOGIN_MS - 1);
    t.is(await limiter.retryAfterSeconds('driver@example.com', '10.0.0.1'), 1, 'in flight: full, no failure yet');
    clock.advance(1);
    t.is(await limiter.retryAfterSeconds('driver@example.com', '10.0.0.1'), 0, 'abandoned: the slot is free');
    await slow.failed();
    t.is(
      await limiter.retryAfterSeconds('driver@example.com', '10.0.0.1'),
      900 - MAX_LOGIN_MS / 1000,
      'a failure counts from its start',
    );
  },
);

storeTest('rows out of the window are pruned; a flood of distinct usernames stays under the cap', async (t, store) => {
  const clock = new FakeClock();
  const limits: LoginLimits = { maxFailuresPerUsername: 5, maxFailuresPerAddress: 5, windowMs: 900_000 };
  const limiter = new LoginLimiter(store, limits, clock);
  for (let i = 0; i < 3; i += 1) await (await started(limiter, `user${i}@example.com`, '10.0.0.1')).failed();
  t.is(await rows(store), 6, 'two rows an attempt: its username and its address');
  clock.advance(limits.windowMs);
  await (await started(limiter, 'next@example.com', '10.0.0.2')).failed();
  t.is(await rows(store), 2, 'the next attempt after PRUNE_EVERY_MS pruned those out of the window');

  // A flood from many addresses, every one admitted: at most the cap plus
  // what one process adds between prunes.
  const capped = new LoginLimiter(store, limits, clock, { maxRows: 40, pruneEveryAttempts: 10 });
  let most = 0;
  for (let i = 0; i < 150; i += 1) {
    await (await started(capped, `flood${i}@example.com`, `10.1.${i >> 8}.${i & 255}`)).failed();
    most = Math.max(most, await rows(store));
    if (i % 30 === 0) clock.advance(1);
  }
  t.log(`rows at most during a flood of 150 distinct usernames: ${most}`);
  t.true(most <= 40 + 2 * 10 + 2, `${most} rows`);
  t.true(PRUNE_EVERY_MS <= limits.windowMs);
});

storeTest.serial(
  'two API processes on one database: concurrent bursts split over both pass exactly the limit, per username and per address',
  async (t, store) => {
    t.timeout(120_000);
    // 20 attempts at once in each process a round, limits 5 per username and
    // 7 per address; rounds enough that the processes overlap on SQLite too
    // (a round there takes milliseconds).
    const rounds = 10;
    const args = (name: string) => [databaseOf(store), String(rounds), '20', '5', '7', name];
    const [one, two] = await Promise.all([burstProcess(t, args('1')), burstProcess(t, args('2'))]);
    const [first, second] = await Promise.all([one(), two()]);
    t.log(`passed per round: ${JSON.stringify(first)} + ${JSON.stringify(second)}`);
    for (let round = 0; round < rounds; round++) {
      const a = first[round];
      const b = second[round];
      t.is((a?.username ?? 0) + (b?.username ?? 0), 5, `round ${round}: 40 attempts for one username`);
      t.is((a?.address ?? 0) + (b?.address ?? 0), 7, `round ${round}: 40 attempts from one address`);
    }
  },
);

/** Holds the advisory locks of a login's keys from a connection of the
 * store's pool, as another process's attempt in the middle of its
 * transaction; released at the test's end at the latest. */
async function holdLoginLocks(
  t: ExecutionContext,
  store: Store,
  username: string,
  address: string,
): Promise<() => Promise<void>> {
  if (store.dialect !== 'postgres') throw new Error("advisory locks are PostgreSQL's");
  const holder = await store.pool.connect();
  await holder.query('BEGIN');
  for (const key of loginLockKeys(username, address))
    await holder.query('SELECT pg_advisory_xact_lock($1, $2)', [ADVISORY_LOCK_CLASS, key]);
  let released = false;
  const release = async (): Promise<void> => {
    if (released) return;
    released = true;
    await holder.query('COMMIT');
    holder.release();
  };
  t.teardown(release);
  return release;
}

/** `promise`, or a failure once `ms` of real time passed (what must not hang, not a measure). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: still waiting after ${ms} ms`)), ms);
    }),
  ]);
}

/** Advisory lock requests of the limiter's class waiting on the server. */
async function waitingAtTheLock(store: Store): Promise<number> {
  if (store.dialect !== 'postgres') return 0;
  const result = await store.pool.query<{ n: number }>(
    // pg_locks is the server's: only this test's database counts (other files' tests share the server).
    `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND classid = $1 AND NOT granted
       AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    [ADVISORY_LOCK_CLASS >>> 0],
  );
  return result.rows[0]?.n ?? 0;
}

storeTest.on(
  'postgres',
  'the wait for the advisory locks is bounded (lock_timeout): past it the attempt is refused as busy, nothing taken (PostgreSQL: its locks)',
  async (t, store) => {
    const limiter = new LoginLimiter(
      store,
      { maxFailuresPerUsername: 5, maxFailuresPerAddress: 20, windowMs: 900_000 },
      new FakeClock(),
      { lockWaitMs: 200 },
    );
    await holdLoginLocks(t, store, 'driver@example.com', '10.0.0.1');
    const error = await within(
      limiter.begin('Driver@Example.com', '10.0.0.1').then(
        () => undefined,
        (reason: unknown) => reason,
      ),
      20_000,
      'an attempt behind a held lock',
    );
    t.true(isDatabaseBusy(error), String(error));
    t.is((error as { code?: string }).code, '55P03', 'lock_not_available');
    t.is(await rows(store), 0, 'nothing taken');
  },
);

storeTest.on(
  'postgres',
  'a burst waits at the locks on one pool connection, the rest in the process; past the lock wait those are refused as busy (PostgreSQL: its pool)',
  async (t, store) => {
    const clock = new FakeClock();
    const limiter = new LoginLimiter(
      store,
      { maxFailuresPerUsername: 5, maxFailuresPerAddress: 20, windowMs: 900_000 },
      clock,
      { lockWaitMs: 60_000 },
    );
    const release = await holdLoginLocks(t, store, 'driver@example.com', '10.0.0.1');
    // More attempts than the pool has connections (4 in these tests).
    const burst = Array.from({ length: 8 }, () =>
      limiter.begin('driver@example.com', '10.0.0.1').then(
        (result) => ({ result }),
        (error: unknown) => ({ error }),
      ),
    );
    // Asked after the burst: served once a connection is free.
    await within(store.kysely.selectNoFrom(sql<number>`1`.as('one')).execute(), 20_000, 'a query beside the burst');
    await waitFor(async () => (await waitingAtTheLock(store)) >= 1, 'the first attempt at the lock', 20_000);
    t.is(await waitingAtTheLock(store), 1, 'one attempt of the process waits at the lock');

    clock.advance(60_000);
    await release();
    const outcomes = await within(Promise.all(burst), 20_000, 'the burst');
    const refused = outcomes.filter((outcome) => 'error' in outcome);
    t.is(refused.length, 7, 'those that waited in the process past the lock wait');
    for (const outcome of refused) t.true(isDatabaseBusy(outcome.error), String(outcome.error));
    const admitted = outcomes.flatMap((outcome) => ('result' in outcome ? [outcome.result] : []));
    t.is(admitted.length, 1, 'the one at the lock, once it was released');
    t.false('retryAfterSeconds' in (admitted[0] ?? {}));
    t.is(await rows(store), 2, "the first attempt's slots only");
  },
);
