// The forwarding outbox on both stores (api/forwarding/outbox.ts):
// the repository's behaviour, and what must hold when several processes
// share one database: a waiting row grouped into one delivery only, a due
// delivery claimed by one worker only, an attempt's outcome recorded only
// by its lease's holder, and two ForwardingWorkers (each on its own
// connection or pool) delivering every box log exactly once to a real
// HTTP receiver, one of them dying mid-delivery.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import test, { type ExecutionContext } from 'ava';
import pg from 'pg';
import { openDatabase } from '../../../api/db/open.js';
import { postgresStore, sqliteStore, type Store } from '../../../api/db/store.js';
import { ingestStoreOf } from '../../../api/box-logs/ingest-store-of.js';
import { OutboxRepository, type DeliveryRow } from '../../../api/forwarding/outbox.js';
import { newWebhookSecret } from '../../../api/forwarding/signature.js';
import { ForwardingWorker } from '../../../api/forwarding/worker.js';
import { FakeClock } from '../../../lib/fake-clock.js';
import { hang, ok, startReceiver, type Answer, type Receiver } from '../../helpers/receiver.js';
import { insertParking } from '../../helpers/store-rows.js';
import { storeTests } from '../../helpers/stores.js';

const storeTest = storeTests(test);

const NOW = 1_800_000_000_000;
const FIXTURE = fileURLToPath(new URL('../../fixtures/outbox-process.ts', import.meta.url));

/** A second connection (SQLite) or pool (PostgreSQL) on the store's database: another process's view. */
function secondStore(t: ExecutionContext, store: Store): Store {
  if (store.dialect === 'sqlite') {
    const db = openDatabase(store.sqlite.name);
    t.teardown(() => db.close());
    return sqliteStore(db);
  }
  const pool = new pg.Pool({ ...store.pool.options, max: 4 });
  pool.on('error', () => undefined);
  const second = postgresStore(pool);
  t.teardown(() => second.close());
  return second;
}

/** Another process on the store's database: on SQLite a child process with
 * its own connection (two connections of one thread cannot wait on each
 * other's lock: a busy wait blocks the thread holding it), on PostgreSQL a
 * pool of its own (the server runs both at once). */
interface OtherProcess {
  /** Groups the waiting rows, starting at the same time as `mine`; resolves with the deliveries it made. */
  group(mine: () => Promise<unknown>): Promise<number>;
  /** Forwards until nothing is pending, starting at the same time as `mine`; resolves with its attempts. */
  forward(mine: () => Promise<unknown>, clock: FakeClock): Promise<number>;
}

function otherProcess(t: ExecutionContext, store: Store): OtherProcess {
  if (store.dialect === 'postgres') {
    const other = secondStore(t, store);
    return {
      group: async (mine) => (await Promise.all([new OutboxRepository(other).groupWaiting(NOW), mine()]))[0],
      forward: async (mine, clock) => {
        const outbox = new OutboxRepository(other);
        const theirs = worker(other, clock);
        const pass = async () => {
          let attempted = 0;
          for (let round = 0; round < 20 && (await outbox.status()).some((row) => row.pending > 0); round += 1)
            attempted += await theirs.runOnce();
          return attempted;
        };
        return (await Promise.all([pass(), mine()]))[0];
      },
    };
  }
  const run = async (mode: 'group' | 'forward', mine: () => Promise<unknown>, now: number) => {
    const child = spawn(process.execPath, ['--import=tsx', FIXTURE, store.sqlite.name, mode, String(now)], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    t.teardown(() => child.kill('SIGKILL'));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const next = async () => {
      const line = await lines.next();
      if (line.done === true) throw new Error(`the other process exited (${String(await exited)})`);
      return line.value;
    };
    t.is(await next(), 'ready');
    child.stdin.end('go\n');
    await mine();
    const result = await next();
    t.is(await exited, 0);
    const match = /^(?:made|attempted) (\d+)$/.exec(result);
    if (!match) throw new Error(`the other process said ${result}`);
    return Number(match[1]);
  };
  return {
    group: (mine) => run('group', mine, NOW),
    forward: (mine, clock) => run('forward', mine, clock.now()),
  };
}

function addParking(store: Store, url: string | null = null, secret: string | null = null): Promise<number> {
  return insertParking(store, {
    forwarding_url: url,
    forwarding_expose: url === null ? 0 : 1,
    forwarding_secret: secret,
    created_at: NOW,
  });
}

let logNumber = 0;

/** Box logs of a parking, stored (received at `receivedAt`), each with its own created_at. */
async function addBoxLogs(
  store: Store,
  parkingId: number,
  count: number,
  options: { verified?: number; receivedAt?: number } = {},
): Promise<number[]> {
  if (count === 0) return [];
  const rows = await store.kysely
    .insertInto('box_logs')
    .values(
      Array.from({ length: count }, () => {
        logNumber += 1;
        return {
          source: 'http' as const,
          equipment_id: 9000 + parkingId,
          secured_parking_id: parkingId,
          type: 'in' as const,
          offline: 0,
          created_at: new Date(Date.UTC(2026, 0, 1) + logNumber * 1000).toISOString().slice(0, 19).replace('T', ' '),
          verified: options.verified ?? 1,
          received_at: options.receivedAt ?? NOW,
        };
      }),
    )
    .returning('id')
    .execute();
  return rows.map((row) => row.id);
}

/** Box logs queued for `url`, as the ingestion core's enqueue leaves them. */
async function queue(store: Store, parkingId: number, url: string, count: number): Promise<number[]> {
  const ids = await addBoxLogs(store, parkingId, count);
  if (ids.length > 0)
    await store.kysely
      .insertInto('forwarding_outbox')
      .values(ids.map((id) => ({ box_log_id: id, parking_id: parkingId, url, created_at: NOW })))
      .execute();
  return ids;
}

const outboxRows = (store: Store) =>
  store.kysely.selectFrom('forwarding_outbox').select(['id', 'delivery_id']).orderBy('id').execute();

const deliveries = (store: Store) =>
  store.kysely
    .selectFrom('forwarding_deliveries')
    .select(['id', 'state', 'attempts', 'next_attempt_at', 'last_error', 'delivered_at'])
    .execute();

storeTest('groupWaiting: deliveries of up to 100 records per URL, the records in order, nextDue', async (t, store) => {
  const outbox = new OutboxRepository(store);
  const parking = await addParking(store);
  const a = await queue(store, parking, 'https://a.test/', 150);
  await queue(store, parking, 'https://b.test/', 3);
  t.is(await outbox.nextDue(), undefined);
  t.is(await outbox.groupWaiting(NOW), 3);
  t.is(await outbox.groupWaiting(NOW), 0, 'nothing waits any more');
  t.true((await outboxRows(store)).every((row) => row.delivery_id !== null));
  const due = await outbox.due(NOW);
  t.deepEqual(due.map((delivery) => delivery.url).sort(), ['https://a.test/', 'https://a.test/', 'https://b.test/']);
  t.deepEqual(await outbox.due(NOW - 1), [], 'not due before it was made');
  const sizes = await Promise.all(due.map(async (delivery) => (await outbox.records(delivery.id)).length));
  t.deepEqual(
    sizes.sort((x, y) => x - y),
    [3, 50, 100],
  );
  const first = due.find((delivery) => delivery.url === 'https://a.test/' && delivery.oldest_record_at === NOW);
  const records = await outbox.records(first?.id ?? '');
  t.deepEqual(
    records.map((row) => row.id),
    [...records.map((row) => row.id)].sort((x, y) => x - y),
    'in queue order',
  );
  t.true(records.every((row) => a.includes(row.id) && row.email === null && row.secured_parking_id === parking));
  t.is(await outbox.nextDue(), NOW);
});

storeTest('claim: one lease per due delivery; only its holder records the outcome', async (t, store) => {
  const outbox = new OutboxRepository(store);
  const parking = await addParking(store);
  await queue(store, parking, 'https://a.test/', 2);
  await outbox.groupWaiting(NOW);
  const [delivery] = await outbox.due(NOW);
  if (!delivery) return t.fail('no delivery');
  const first = await outbox.claim(delivery, NOW + 20_000);
  t.deepEqual(first, { deliveryId: delivery.id, until: NOW + 20_000 });
  t.is(await outbox.claim(delivery, NOW + 20_000), undefined, 'taken: the row read before is stale');
  t.deepEqual(await outbox.due(NOW + 19_999), [], 'not due while leased');
  // The first holder stalls past its lease; another worker takes it over.
  const [again] = await outbox.due(NOW + 20_000);
  if (!again || !first) return t.fail('not due again when the lease ended');
  const second = await outbox.claim(again, NOW + 40_000);
  if (!second) return t.fail('not claimed after the lease');
  t.false(await outbox.markDelivered(first, NOW + 30_000), 'the stale holder records nothing');
  t.false(await outbox.markFailed(first, 'timeout', NOW + 30_000, { dead: true }));
  t.false(await outbox.release(first, NOW + 30_000));
  t.like(await deliveries(store).then((rows) => rows[0]), {
    state: 'pending',
    attempts: 0,
    next_attempt_at: NOW + 40_000,
  });
  t.true(await outbox.markFailed(second, 'HTTP 500', NOW + 31_000, { dead: false, retryAt: NOW + 36_000 }));
  t.like(await deliveries(store).then((rows) => rows[0]), {
    state: 'pending',
    attempts: 1,
    next_attempt_at: NOW + 36_000,
    last_error: 'HTTP 500',
  });
  t.false(await outbox.markDelivered(second, NOW + 32_000), 'a lease ends with its outcome');
  const [third] = await outbox.due(NOW + 36_000);
  const lease = third && (await outbox.claim(third, NOW + 60_000));
  if (!lease) return t.fail('not claimed on retry');
  t.true(await outbox.markDelivered(lease, NOW + 37_000));
  t.like(await deliveries(store).then((rows) => rows[0]), { state: 'delivered', attempts: 2, last_error: null });
  t.deepEqual(await outbox.due(NOW + 100_000), []);
  t.is(await outbox.nextDue(), undefined);
});

storeTest('disable, revive, replay, status (and its synchronous SQLite form), signing secrets', async (t, store) => {
  const outbox = new OutboxRepository(store);
  const secret = newWebhookSecret();
  const parking = await addParking(store, 'https://a.test/', secret);
  t.deepEqual(await outbox.signingSecrets(parking), {
    forwarding_secret: secret,
    forwarding_previous_secret: null,
    forwarding_previous_secret_until: null,
  });
  t.is(await outbox.signingSecrets(parking + 1), undefined);
  await queue(store, parking, 'https://a.test/', 2);
  await queue(store, parking, 'https://old.test/', 1);
  await outbox.groupWaiting(NOW);
  const [delivery, old] = (await outbox.due(NOW)).sort((x, y) => x.url.localeCompare(y.url));
  const lease = delivery && (await outbox.claim(delivery, NOW + 20_000));
  if (!lease) return t.fail('not claimed');
  // Another URL of the parking (its previous one) with a retry an hour away.
  const oldLease = old && (await outbox.claim(old, NOW + 20_000));
  if (!oldLease) return t.fail('not claimed');
  await outbox.markFailed(oldLease, 'HTTP 500', NOW, { dead: false, retryAt: NOW + 3_600_000 });
  await outbox.disable(parking, 'https://a.test/', NOW + 1000, 'HTTP 410 Gone');
  await outbox.disable(parking, 'https://a.test/', NOW + 2000, 'again: ignored');
  await outbox.markFailed(lease, 'HTTP 410 Gone', NOW + 1000, { dead: false, retryAt: NOW + 1000 });
  t.deepEqual(await outbox.due(NOW + 5000), [], 'a disabled URL has nothing due');
  t.is(await outbox.nextDue(), NOW + 3_600_000, "the other URL's retry only");
  const expected = {
    parking_id: parking,
    url: 'https://a.test/',
    pending: 2,
    delivered: 0,
    dead: 0,
    last_error: 'HTTP 410 Gone',
    last_attempt_at: NOW + 1000,
    disabled_at: NOW + 1000,
  };
  const oldStatus = {
    parking_id: parking,
    url: 'https://old.test/',
    pending: 1,
    delivered: 0,
    dead: 0,
    last_error: 'HTTP 500',
    last_attempt_at: NOW,
    disabled_at: null,
  };
  t.deepEqual(await outbox.status(), [expected, oldStatus]);
  t.deepEqual(await outbox.status(parking), [expected, oldStatus]);
  t.deepEqual(await outbox.status(parking + 1), []);
  t.deepEqual(await outbox.revive(parking, NOW + 6000), { revived: 0, enabledUrls: ['https://a.test/'] });
  t.deepEqual(
    (await outbox.due(NOW + 6000)).map((row) => row.id),
    [delivery.id],
    "due at once when revived; the other URL's retry keeps its time",
  );
  // Dead deliveries come back with a fresh schedule.
  const [revived] = await outbox.due(NOW + 6000);
  const deadLease = revived && (await outbox.claim(revived, NOW + 30_000));
  if (!deadLease) return t.fail('not claimed');
  t.true(await outbox.markFailed(deadLease, 'HTTP 500', NOW + 7000, { dead: true }));
  t.like((await outbox.status(parking))[0], { pending: 0, dead: 2, disabled_at: null });
  t.deepEqual(await outbox.revive(parking, NOW + 8000), { revived: 1, enabledUrls: [] });
  t.like(await deliveries(store).then((rows) => rows.find((row) => row.id === delivery.id)), {
    state: 'pending',
    attempts: 0,
    next_attempt_at: NOW + 8000,
  });
  // Replay: the parking's logs received since a time, verified ones unless told otherwise.
  await addBoxLogs(store, parking, 2, { receivedAt: NOW + 10_000 });
  await addBoxLogs(store, parking, 1, { receivedAt: NOW + 10_000, verified: 0 });
  t.is(await outbox.replay(parking, 'https://c.test/', NOW + 10_000, false, NOW + 20_000), 2);
  t.is(await outbox.replay(parking, 'https://c.test/', NOW + 10_000, true, NOW + 20_000), 3);
  t.like(
    (await outbox.status(parking)).find((row) => row.url === 'https://c.test/'),
    { pending: 5, delivered: 0, dead: 0, last_error: null, last_attempt_at: null, disabled_at: null },
  );
  const queued = await store.kysely
    .selectFrom('forwarding_outbox')
    .select(['url', 'created_at'])
    .where('url', '=', 'https://c.test/')
    .execute();
  t.true(queued.every((row) => row.created_at === NOW + 20_000));
});

storeTest(
  "the ingestion core's enqueue (its IngestStore) leaves rows the outbox groups and reports",
  async (t, store) => {
    const outbox = new OutboxRepository(store);
    const parking = await addParking(store);
    const ids = await addBoxLogs(store, parking, 2);
    await ingestStoreOf(store).enqueueOutbox(
      store.kysely,
      ids.map((id) => ({ boxLogId: id, parkingId: parking, url: 'https://a.test/' })),
      NOW,
    );
    t.like((await outbox.status())[0], { url: 'https://a.test/', pending: 2 });
  },
);

storeTest('two processes grouping at once: each waiting row in one delivery, no delivery empty', async (t, store) => {
  const other = otherProcess(t, store);
  const parking = await addParking(store);
  const urls = Array.from({ length: 12 }, (_, index) => `https://r${index}.test/`);
  let total = 0;
  for (let round = 0; round < 2; round += 1) {
    for (const url of urls) await queue(store, parking, url, 130);
    let mine = 0;
    const theirs = await other.group(async () => {
      mine = await new OutboxRepository(store).groupWaiting(NOW);
    });
    const made = [mine, theirs] as const;
    const rows = await outboxRows(store);
    t.true(
      rows.every((row) => row.delivery_id !== null),
      `round ${round}: every row grouped`,
    );
    const perDelivery = new Map<string, number>();
    for (const row of rows) perDelivery.set(row.delivery_id ?? '', (perDelivery.get(row.delivery_id ?? '') ?? 0) + 1);
    const all = await deliveries(store);
    t.is(all.length, perDelivery.size, `round ${round}: no delivery without records`);
    total += made[0] + made[1];
    t.is(all.length, total, `round ${round}: each delivery counted once`);
    t.true([...perDelivery.values()].every((count) => count <= 100));
  }
});

storeTest('two processes claiming at once: one lease each delivery', async (t, store) => {
  const other = secondStore(t, store);
  const parking = await addParking(store);
  for (let index = 0; index < 20; index += 1) await queue(store, parking, `https://r${index}.test/`, 1);
  const mine = new OutboxRepository(store);
  const theirs = new OutboxRepository(other);
  await mine.groupWaiting(NOW);
  const due: DeliveryRow[] = await mine.due(NOW);
  t.is(due.length, 20);
  const claims = await Promise.all(
    due.flatMap((delivery) => [mine.claim(delivery, NOW + 20_000), theirs.claim(delivery, NOW + 20_001)]),
  );
  for (let index = 0; index < due.length; index += 1) {
    const won = [claims[2 * index], claims[2 * index + 1]].filter((lease) => lease !== undefined);
    t.is(won.length, 1, `delivery ${index}: one winner`);
  }
});

/** A worker of one "process": its own store connection and clock. */
function worker(store: Store, clock: FakeClock): ForwardingWorker {
  return new ForwardingWorker({
    clock,
    outbox: new OutboxRepository(store),
    timeoutMs: 1000,
    allowPrivate: true,
  });
}

/** Every record's created_at the receiver got, with how many times. */
function receivedCounts(receiver: Receiver): Map<string, number> {
  const counts = new Map<string, number>();
  for (const request of receiver.received)
    for (const record of JSON.parse(request.body) as { created_at: string }[])
      counts.set(record.created_at, (counts.get(record.created_at) ?? 0) + 1);
  return counts;
}

storeTest.serial('two workers on one database forward every box log exactly once', async (t, store) => {
  const other = otherProcess(t, store);
  const clock = new FakeClock(NOW);
  // A little slow, so that both workers have deliveries in flight at once.
  const slowOk: Answer = (response) => setTimeout(() => response.writeHead(200).end('ok'), 50);
  const receiver = await startReceiver(t, [slowOk], clock);
  const parking = await addParking(store, receiver.url, newWebhookSecret());
  const ids = await queue(store, parking, receiver.url, 1450);
  const created = await store.kysely.selectFrom('box_logs').select('created_at').where('id', 'in', ids).execute();
  const mine = worker(store, clock);
  const pending = async () => (await new OutboxRepository(store).status())[0]?.pending ?? 0;
  let attempted = 0;
  const theirs = await other.forward(async () => {
    for (let pass = 0; pass < 20 && (await pending()) > 0; pass += 1) attempted += await mine.runOnce();
  }, clock);
  t.is(await pending(), 0);
  const counts = receivedCounts(receiver);
  t.is(counts.size, ids.length, 'every log received');
  t.true(
    created.every((row) => counts.get(row.created_at) === 1),
    'each once',
  );
  const all = await deliveries(store);
  t.true(all.every((delivery) => delivery.state === 'delivered' && delivery.attempts === 1));
  t.is(receiver.received.length, all.length, 'one request per delivery');
  t.is(attempted + theirs, all.length, 'each delivery attempted by one of them');
  t.log(`this process attempted ${attempted}, the other ${theirs}`);
  t.is(new Set(receiver.received.map((request) => request.headers['webhook-id'])).size, all.length);
});

storeTest.serial(
  'a worker dying mid-delivery: the other delivers after its lease, and the late one records nothing',
  async (t, store) => {
    const other = secondStore(t, store);
    const dyingClock = new FakeClock(NOW);
    const clock = new FakeClock(NOW);
    const receiver = await startReceiver(t, [hang, ok], clock);
    const parking = await addParking(store, receiver.url, newWebhookSecret());
    await queue(store, parking, receiver.url, 3);
    const dying = worker(store, dyingClock);
    const survivor = worker(other, clock);
    const cut = dying.runOnce(); // its request hangs: the process is as good as dead
    await receiver.waitFor(1);
    t.is(await survivor.runOnce(), 0, 'leased: nothing to send yet');
    clock.advance(1000 + 5000 - 1);
    t.is(await survivor.runOnce(), 0, 'the lease still runs');
    clock.advance(1);
    t.is(await survivor.runOnce(), 1, 'due again when the lease ended: taken over');
    t.like(await deliveries(store).then((rows) => rows[0]), { state: 'delivered', attempts: 1, last_error: null });
    // The dead worker's attempt times out at last: its lease is gone, it changes nothing.
    await dyingClock.advanceAsync(1000);
    t.is(await cut, 1);
    t.like(await deliveries(store).then((rows) => rows[0]), { state: 'delivered', attempts: 1, last_error: null });
    t.is(receiver.received.length, 2);
    t.is(receiver.received[0]?.headers['webhook-id'], receiver.received[1]?.headers['webhook-id'], 'the same delivery');
    t.deepEqual([...receivedCounts(receiver).values()], [2, 2, 2], 'at least once: the hung attempt had sent them too');
  },
);
