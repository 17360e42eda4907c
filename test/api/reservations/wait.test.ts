// Waiting for a reserved box, over real sockets (the app listening on an
// ephemeral port) on a fake clock: first come first served, the end of the
// wait, a client that disconnects, the API stopping.
import test from 'ava';
import { addOperator } from '../../../api/operators/accounts.js';
import { testApp } from '../../helpers/api-app.js';
import { addParking } from '../../helpers/control-bench.js';
import { listening, release, reservationOf, reserve, reserveOverHttp, type ReservationBody } from './reserve.js';

/** Real time for requests and the database to do their part. */
const settle = (ms = 150): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Until the box's queue has `length` waiters (real time, 5 s at most). */
async function untilQueued(
  app: Parameters<typeof reservationOf>[0],
  token: string,
  moduleId: number,
  length: number,
): Promise<void> {
  for (let spin = 0; spin < 500; spin++) {
    const body = (await reservationOf(app, token, moduleId)).json<{ reservation: ReservationBody | null }>();
    if ((body.reservation?.queue.length ?? 0) === length) return;
    await settle(10);
  }
  throw new Error(`the queue of box ${moduleId} never had ${length} waiters`);
}

test('two concurrent takes of a free box: one 201 at once, the other waits and gets 201 after the DELETE', async (t) => {
  const app = await testApp(t);
  const base = await listening(app);
  const ci = await addOperator(app.ctx.store, 'ci', app.clock.now());
  const ada = await addOperator(app.ctx.store, 'ada', app.clock.now());
  const [moduleId = 0] = (await addParking(app)).moduleIds;
  const first = reserveOverHttp(base, ci.token, moduleId, { ttl_seconds: 60, wait_seconds: 600, note: 'ci' });
  const second = reserveOverHttp(base, ada.token, moduleId, { ttl_seconds: 60, wait_seconds: 600, note: 'ada' });
  const winner = await Promise.race([first, second]);
  t.is(winner.status, 201);
  const winnerBody = winner.body as unknown as ReservationBody;
  const winnerToken = winnerBody.holder === 'ci' ? ci.token : ada.token;
  const loser = winnerBody.holder === 'ci' ? second : first;
  await untilQueued(app, ci.token, moduleId, 1);
  const view = (await reservationOf(app, ci.token, moduleId)).json<{ reservation: ReservationBody }>().reservation;
  t.is(view.queue[0]?.holder, winnerBody.holder === 'ci' ? 'ada' : 'ci');
  t.is((await release(app, winnerToken, moduleId, winnerBody.token)).statusCode, 204);
  const late = await loser;
  t.is(late.status, 201, JSON.stringify(late.body));
  t.like(late.body, { holder: view.queue[0]?.holder, queue: [] });
  t.not(late.body.token, winnerBody.token);
});

test('first come first served with three: the queue is served in the order it was joined', async (t) => {
  const app = await testApp(t);
  const base = await listening(app);
  const operators = [];
  for (const name of ['a', 'b', 'c', 'd']) operators.push(await addOperator(app.ctx.store, name, app.clock.now()));
  const [moduleId = 0] = (await addParking(app)).moduleIds;
  const [a, b, c, d] = operators as [
    (typeof operators)[0],
    (typeof operators)[0],
    (typeof operators)[0],
    (typeof operators)[0],
  ];
  const held = (await reserve(app, a.token, moduleId, { ttl_seconds: 60 })).json<ReservationBody>();
  const waits = [];
  for (const [index, who] of [b, c, d].entries()) {
    waits.push(reserveOverHttp(base, who.token, moduleId, { ttl_seconds: 60, wait_seconds: 600 }));
    await untilQueued(app, a.token, moduleId, index + 1);
  }
  t.deepEqual(
    (await reservationOf(app, a.token, moduleId))
      .json<{ reservation: ReservationBody }>()
      .reservation.queue.map((entry) => entry.holder),
    ['b', 'c', 'd'],
  );
  let token = held.token;
  let holder = a;
  for (const [index, next] of [b, c, d].entries()) {
    t.is((await release(app, holder.token, moduleId, token)).statusCode, 204);
    const got = await waits[index];
    t.is(got?.status, 201);
    t.is(got?.body.holder, next.name);
    token = String(got?.body.token);
    holder = next;
  }
});

test('the wait ends at wait_seconds: 409 box_reserved naming the holder, and it leaves the queue', async (t) => {
  const app = await testApp(t);
  const base = await listening(app);
  const ci = await addOperator(app.ctx.store, 'ci', app.clock.now());
  const ada = await addOperator(app.ctx.store, 'ada', app.clock.now());
  const [moduleId = 0] = (await addParking(app)).moduleIds;
  const held = (await reserve(app, ci.token, moduleId, { ttl_seconds: 3_600, note: 'soak' })).json<ReservationBody>();
  const waiting = reserveOverHttp(base, ada.token, moduleId, { ttl_seconds: 60, wait_seconds: 10 });
  await untilQueued(app, ci.token, moduleId, 1);
  for (let step = 0; step < 19; step++) {
    app.clock.advance(500);
    await settle(20);
  }
  await untilQueued(app, ci.token, moduleId, 1);
  app.clock.advance(500);
  const ended = await waiting;
  t.is(ended.status, 409);
  t.like(ended.body, { error: 'box_reserved', holder: 'ci', note: 'soak', expires_at: held.expires_at });
  await untilQueued(app, ci.token, moduleId, 0);
});

test('a held reservation that expires hands the box to the first waiter at once', async (t) => {
  const app = await testApp(t);
  const base = await listening(app);
  const ci = await addOperator(app.ctx.store, 'ci', app.clock.now());
  const ada = await addOperator(app.ctx.store, 'ada', app.clock.now());
  const [moduleId = 0] = (await addParking(app)).moduleIds;
  await reserve(app, ci.token, moduleId, { ttl_seconds: 2 });
  const waiting = reserveOverHttp(base, ada.token, moduleId, { ttl_seconds: 60, wait_seconds: 600 });
  await untilQueued(app, ci.token, moduleId, 1);
  app.clock.advance(2_000);
  const got = await waiting;
  t.is(got.status, 201);
  t.like(got.body, { holder: 'ada', since: new Date(app.clock.now()).toISOString() });
});

test('a waiter that disconnects leaves the queue at once; the one behind it moves up', async (t) => {
  const app = await testApp(t);
  const base = await listening(app);
  const ci = await addOperator(app.ctx.store, 'ci', app.clock.now());
  const ada = await addOperator(app.ctx.store, 'ada', app.clock.now());
  const bob = await addOperator(app.ctx.store, 'bob', app.clock.now());
  const [moduleId = 0] = (await addParking(app)).moduleIds;
  const held = (await reserve(app, ci.token, moduleId, { ttl_seconds: 600 })).json<ReservationBody>();
  const abort = new AbortController();
  const gone = reserveOverHttp(base, ada.token, moduleId, { ttl_seconds: 60, wait_seconds: 600 }, abort.signal);
  await untilQueued(app, ci.token, moduleId, 1);
  const behind = reserveOverHttp(base, bob.token, moduleId, { ttl_seconds: 60, wait_seconds: 600 });
  await untilQueued(app, ci.token, moduleId, 2);
  abort.abort();
  await t.throwsAsync(gone, { any: true });
  await untilQueued(app, ci.token, moduleId, 1);
  t.deepEqual(
    (await reservationOf(app, ci.token, moduleId))
      .json<{ reservation: ReservationBody }>()
      .reservation.queue.map((entry) => entry.holder),
    ['bob'],
  );
  t.is((await release(app, ci.token, moduleId, held.token)).statusCode, 204);
  t.like((await behind).body, { holder: 'bob' });
});

test('a wait outlasts HTTP_CONNECTION_TIMEOUT_MS: the connection stays open while it waits', async (t) => {
  const app = await testApp(t, { httpConnectionTimeoutMs: 300 });
  const base = await listening(app);
  const ci = await addOperator(app.ctx.store, 'ci', app.clock.now());
  const ada = await addOperator(app.ctx.store, 'ada', app.clock.now());
  const [moduleId = 0] = (await addParking(app)).moduleIds;
  const held = (await reserve(app, ci.token, moduleId, { ttl_seconds: 600 })).json<ReservationBody>();
  const waiting = reserveOverHttp(base, ada.token, moduleId, { ttl_seconds: 60, wait_seconds: 600 });
  await untilQueued(app, ci.token, moduleId, 1);
  await settle(800);
  t.is((await release(app, ci.token, moduleId, held.token)).statusCode, 204);
  t.is((await waiting).status, 201);
});

test('the API stopping ends every wait: 409 box_reserved naming the holder, saying why', async (t) => {
  const app = await testApp(t);
  const base = await listening(app);
  const ci = await addOperator(app.ctx.store, 'ci', app.clock.now());
  const ada = await addOperator(app.ctx.store, 'ada', app.clock.now());
  const [moduleId = 0] = (await addParking(app)).moduleIds;
  await reserve(app, ci.token, moduleId, { ttl_seconds: 600 });
  const waiting = reserveOverHttp(base, ada.token, moduleId, { ttl_seconds: 60, wait_seconds: 600 });
  await untilQueued(app, ci.token, moduleId, 1);
  const closing = app.app.close();
  const ended = await waiting;
  await closing;
  t.is(ended.status, 409);
  t.like(ended.body, { error: 'box_reserved', holder: 'ci' });
  t.regex(String(ended.body.message), /stopping/);
});
