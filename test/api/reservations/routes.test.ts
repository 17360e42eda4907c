// POST, DELETE and GET /api/operator/boxes/:module_id/reservation on a real
// API (its SQLite file, or PostgreSQL with PARKBENCH_TEST_STORE=postgres) on
// a fake clock: take, renew, release, expiry, and what each refuses.
import test from 'ava';
import { addOperator } from '../../../api/operators/accounts.js';
import { errorBody, loggedIn, testApp } from '../../helpers/api-app.js';
import { addParking } from '../../helpers/control-bench.js';
import { release, reservationOf, reserve, type ReservationBody } from './reserve.js';

test('take, renew, release: 201 with a token, 200 renewed with the token, 204 released; GET shows it', async (t) => {
  const app = await testApp(t);
  const { token } = await addOperator(app.ctx.store, 'ci', app.clock.now());
  const [moduleId = 0] = (await addParking(app)).moduleIds;
  const free = await reservationOf(app, token, moduleId);
  t.is(free.statusCode, 200);
  t.deepEqual(free.json(), { reservation: null });

  const taken = await reserve(app, token, moduleId, { ttl_seconds: 60, note: 'CI job 123' });
  t.is(taken.statusCode, 201, taken.body);
  const body = taken.json<ReservationBody>();
  t.regex(body.token, /^[A-Za-z0-9_-]{43}$/);
  const now = app.clock.now();
  t.deepEqual(
    { ...body, token: '' },
    {
      token: '',
      module_id: moduleId,
      holder: 'ci',
      note: 'CI job 123',
      since: new Date(now).toISOString(),
      expires_at: new Date(now + 60_000).toISOString(),
      ttl_seconds: 60,
      queue: [],
    },
  );
  const { token: _token, ...view } = body;
  t.deepEqual((await reservationOf(app, token, moduleId)).json(), { reservation: view });

  app.clock.advance(30_000);
  const renewed = await reserve(app, token, moduleId, { ttl_seconds: 120 }, body.token);
  t.is(renewed.statusCode, 200, renewed.body);
  t.like(renewed.json<ReservationBody>(), {
    token: body.token,
    note: 'CI job 123',
    ttl_seconds: 120,
    expires_at: new Date(app.clock.now() + 120_000).toISOString(),
  });

  const released = await release(app, token, moduleId, body.token);
  t.is(released.statusCode, 204, released.body);
  t.deepEqual((await reservationOf(app, token, moduleId)).json(), { reservation: null });
  const again = await release(app, token, moduleId, body.token);
  t.is(again.statusCode, 404);
  t.is(errorBody(t, again).error, 'resource_not_found');
});

test('a held box: another operator (or the holder without the token) gets 409 box_reserved naming holder, note and expiry', async (t) => {
  const app = await testApp(t);
  const ci = await addOperator(app.ctx.store, 'ci', app.clock.now());
  const ada = await addOperator(app.ctx.store, 'ada', app.clock.now());
  const [moduleId = 0] = (await addParking(app)).moduleIds;
  const taken = (await reserve(app, ci.token, moduleId, { ttl_seconds: 60, note: 'CI job 7' })).json<ReservationBody>();
  for (const [who, reservation] of [
    [ada.token, undefined],
    [ada.token, taken.token],
    [ci.token, undefined],
  ] as const) {
    const refused = await reserve(app, who, moduleId, { ttl_seconds: 60 }, reservation);
    t.is(refused.statusCode, 409, refused.body);
    const body = refused.json<Record<string, unknown>>();
    t.like(body, {
      error: 'box_reserved',
      holder: 'ci',
      note: 'CI job 7',
      expires_at: taken.expires_at,
    });
    t.is(errorBody(t, refused).details[0]?.path, 'module_id');
    t.regex(errorBody(t, refused).message, /reserved/);
    t.regex(
      errorBody(t, refused).details[0]?.message ?? '',
      new RegExp(`reserved by ci \\(CI job 7\\) until ${taken.expires_at}`),
    );
  }
  // Another operator's DELETE with the holder's token: not theirs.
  const notTheirs = await release(app, ada.token, moduleId, taken.token);
  t.is(notTheirs.statusCode, 404);
});

test('a reservation ends at expires_at: the box is free, GET shows null, the token renews nothing', async (t) => {
  const app = await testApp(t);
  const { token } = await addOperator(app.ctx.store, 'ci', app.clock.now());
  const [moduleId = 0] = (await addParking(app)).moduleIds;
  const taken = (await reserve(app, token, moduleId, { ttl_seconds: 10 })).json<ReservationBody>();
  app.clock.advance(9_999);
  t.not((await reservationOf(app, token, moduleId)).json<{ reservation: unknown }>().reservation, null);
  app.clock.advance(1);
  t.deepEqual((await reservationOf(app, token, moduleId)).json(), { reservation: null });
  t.is((await release(app, token, moduleId, taken.token)).statusCode, 404);
  // The old token counts as none: a fresh take.
  const fresh = await reserve(app, token, moduleId, { ttl_seconds: 10 }, taken.token);
  t.is(fresh.statusCode, 201);
  t.not(fresh.json<ReservationBody>().token, taken.token);
});

test('bad input: 422 naming the field, 400 without the header, 404 for an unknown box, 403 for a driver', async (t) => {
  const app = await testApp(t);
  const { token } = await addOperator(app.ctx.store, 'ci', app.clock.now());
  const [moduleId = 0] = (await addParking(app)).moduleIds;
  const cases: [unknown, string][] = [
    [{}, 'ttl_seconds'],
    [{ ttl_seconds: 0 }, 'ttl_seconds'],
    [{ ttl_seconds: 86_401 }, 'ttl_seconds'],
    [{ ttl_seconds: 1.5 }, 'ttl_seconds'],
    [{ ttl_seconds: '60' }, 'ttl_seconds'],
    [{ ttl_seconds: 60, wait_seconds: -1 }, 'wait_seconds'],
    [{ ttl_seconds: 60, wait_seconds: 3_601 }, 'wait_seconds'],
    [{ ttl_seconds: 60, note: 'x'.repeat(201) }, 'note'],
    [{ ttl_seconds: 60, note: 'a\u0000b' }, 'note'],
    [{ ttl_seconds: 60, note: 7 }, 'note'],
  ];
  for (const [payload, field] of cases) {
    const response = await reserve(app, token, moduleId, payload);
    t.is(response.statusCode, 422, JSON.stringify(payload));
    t.is(errorBody(t, response).details[0]?.path, field, JSON.stringify(payload));
  }
  const badId = await reserve(app, token, 'x', { ttl_seconds: 60 });
  t.is(badId.statusCode, 422);
  t.is(errorBody(t, badId).details[0]?.path, 'module_id');
  for (const response of [
    await reserve(app, token, 4242, { ttl_seconds: 60 }),
    await reservationOf(app, token, 4242),
    await release(app, token, 4242, 'x'),
  ]) {
    t.is(response.statusCode, 404, response.body);
    t.like(errorBody(t, response), { error: 'resource_not_found', details: [{ path: 'module_id' }] });
  }
  const noHeader = await release(app, token, moduleId);
  t.is(noHeader.statusCode, 400);
  t.like(errorBody(t, noHeader), { error: 'missing_parameter', details: [{ path: 'Parkbench-Reservation' }] });

  const driver = await loggedIn(app);
  for (const response of [
    await reserve(app, driver.access_token, moduleId, { ttl_seconds: 60 }),
    await release(app, driver.access_token, moduleId, 'x'),
    await reservationOf(app, driver.access_token, moduleId),
  ]) {
    t.is(response.statusCode, 403);
    t.is(errorBody(t, response).error, 'operator_required');
  }
  t.deepEqual((await reservationOf(app, token, moduleId)).json(), { reservation: null });
});

test('each change publishes the box anew: take, renew, release, and an expiry noticed by the timer, without a request', async (t) => {
  const app = await testApp(t);
  const { token } = await addOperator(app.ctx.store, 'ci', app.clock.now());
  const [moduleId = 0] = (await addParking(app)).moduleIds;
  const { events } = app.ctx;
  const boxEventsSince = (id: number): number => {
    let count = 0;
    events.forEachAfter(id, (event) => {
      if (event.kind === 'box' && event.moduleId === moduleId) count++;
    });
    return count;
  };
  let head = events.headId;
  const taken = (await reserve(app, token, moduleId, { ttl_seconds: 10 })).json<ReservationBody>();
  t.is(boxEventsSince(head), 1, 'take');
  head = events.headId;
  await reserve(app, token, moduleId, { ttl_seconds: 10 }, taken.token);
  t.is(boxEventsSince(head), 1, 'renewal');
  head = events.headId;
  t.is((await release(app, token, moduleId, taken.token)).statusCode, 204);
  t.is(boxEventsSince(head), 1, 'release');

  await reserve(app, token, moduleId, { ttl_seconds: 10 });
  head = events.headId;
  app.clock.advance(10_000);
  for (let spin = 0; spin < 200 && boxEventsSince(head) === 0; spin++)
    await new Promise((resolve) => setTimeout(resolve, 10));
  t.is(boxEventsSince(head), 1, 'expiry');
  t.is(await app.ctx.store.kysely.selectFrom('box_reservations').select('id').executeTakeFirst(), undefined);
});

test('at most 100 requests wait for one box: the next is refused 409 operation_refused, at once', async (t) => {
  const app = await testApp(t);
  const { token } = await addOperator(app.ctx.store, 'ci', app.clock.now());
  const [moduleId = 0] = (await addParking(app)).moduleIds;
  await reserve(app, token, moduleId, { ttl_seconds: 600 });
  const { id: operatorId } = await app.ctx.store.kysely
    .selectFrom('operators')
    .select('id')
    .where('name', '=', 'ci')
    .executeTakeFirstOrThrow();
  const now = app.clock.now();
  await app.ctx.store.kysely
    .insertInto('box_reservations')
    .values(
      Array.from({ length: 100 }, (_, index) => ({
        module_id: moduleId,
        token_hash: `waiting-${index}`,
        operator_id: operatorId,
        holder: 'ci',
        note: null,
        state: 'waiting' as const,
        ttl_ms: 60_000,
        queued_at: now,
        held_since: null,
        expires_at: now + 60_000,
      })),
    )
    .execute();
  const full = await reserve(app, token, moduleId, { ttl_seconds: 60, wait_seconds: 60 });
  t.is(full.statusCode, 409, full.body);
  t.like(errorBody(t, full), { error: 'operation_refused', details: [{ path: 'module_id' }] });
  t.regex(errorBody(t, full).details[0]?.message ?? '', /100 requests wait for box/);
});

test("a waiter whose process died leaves the queue once its row's lease passes: the release then frees the box", async (t) => {
  const app = await testApp(t);
  const { token } = await addOperator(app.ctx.store, 'ci', app.clock.now());
  const [moduleId = 0] = (await addParking(app)).moduleIds;
  const held = (await reserve(app, token, moduleId, { ttl_seconds: 600 })).json<ReservationBody>();
  const { id: operatorId } = await app.ctx.store.kysely
    .selectFrom('operators')
    .select('id')
    .where('name', '=', 'ci')
    .executeTakeFirstOrThrow();
  // What a waiting request of another API process leaves when that process dies: its row, kept ahead no more.
  const now = app.clock.now();
  await app.ctx.store.kysely
    .insertInto('box_reservations')
    .values({
      module_id: moduleId,
      token_hash: 'dead-waiter',
      operator_id: operatorId,
      holder: 'ci',
      note: 'dead',
      state: 'waiting',
      ttl_ms: 60_000,
      queued_at: now,
      held_since: null,
      expires_at: now + 5_000,
    })
    .execute();
  t.like((await reservationOf(app, token, moduleId)).json(), { reservation: { queue: [{ note: 'dead' }] } });
  app.clock.advance(5_000);
  t.like((await reservationOf(app, token, moduleId)).json(), { reservation: { queue: [] } });
  t.is((await release(app, token, moduleId, held.token)).statusCode, 204);
  t.deepEqual((await reservationOf(app, token, moduleId)).json(), { reservation: null });
  t.is((await reserve(app, token, moduleId, { ttl_seconds: 60 })).statusCode, 201);
});
