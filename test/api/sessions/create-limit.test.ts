// POST /api/car_driver/parking_sessions past the driver's limit: 429
// too_many_sessions with Retry-After and the registry's body, nothing
// created; the contract's answers (400, 401, 404, 422) unchanged; the
// limit shared by two API processes on one database.
import test from 'ava';
import { errorBody, loggedIn, testApp, type TestApp } from '../../helpers/api-app.js';
import { anotherDriver, createSession, seedParking } from '../../helpers/parking.js';
import { value } from '../../helpers/sql.js';

/** Creates a session and finishes it at once (as if exited and paid), so the driver may create the next. */
async function createAndEnd(app: TestApp, token: string, parkingId: number): Promise<number> {
  const created = await createSession(app, token, { parking_session: { secured_parking_id: parkingId } });
  if (created.statusCode === 201)
    await finish(app, created.json<{ parking_session: { id: number } }>().parking_session.id);
  return created.statusCode;
}

async function finish(app: TestApp, sessionId: number): Promise<void> {
  await app.ctx.store.kysely
    .updateTable('parking_sessions')
    .set({ state: 'finished' })
    .where('id', '=', sessionId)
    .execute();
}

async function sessionCount(app: TestApp): Promise<number> {
  return Number(await value(app.ctx.store, 'SELECT count(*) FROM parking_sessions'));
}

test('past SESSION_CREATE_BURST: 429 too_many_sessions with Retry-After, nothing created; a token back each interval', async (t) => {
  const app = await testApp(t);
  const parking = await seedParking(app);
  const { access_token: token } = await loggedIn(app);
  t.is(app.config.sessionCreateBurst, 20);
  t.is(app.config.sessionCreateRatePerMinute, 30);
  for (let n = 0; n < 20; n += 1) t.is(await createAndEnd(app, token, parking.id), 201, `session ${n + 1}`);

  const refused = await createSession(app, token, { parking_session: { secured_parking_id: parking.id } });
  t.is(refused.statusCode, 429);
  t.is(refused.headers['retry-after'], '2');
  const body = errorBody(t, refused);
  t.is(body.error, 'too_many_sessions');
  t.is(body.message, 'The driver created parking sessions too fast; retry after the Retry-After seconds.');
  t.deepEqual(body.details, [
    {
      path: 'parking_session',
      message:
        'the driver created parking sessions too fast: at most 20 at once, then one every 2 s; the next one in 2 s',
    },
  ]);
  t.is(await sessionCount(app), 20, 'nothing created');

  // The contract's answers come first: a missing parameter, an unknown parking, no token.
  const missing = await createSession(app, token, {});
  t.is(missing.statusCode, 400);
  t.is(errorBody(t, missing).error, 'missing_parameter');
  const unknown = await createSession(app, token, { parking_session: { secured_parking_id: 999_999 } });
  t.is(unknown.statusCode, 404);
  const anonymous = await createSession(app, undefined, { parking_session: { secured_parking_id: parking.id } });
  t.is(anonymous.statusCode, 401);

  app.clock.advance(1_999);
  const early = await createSession(app, token, { parking_session: { secured_parking_id: parking.id } });
  t.is(early.statusCode, 429);
  t.is(early.headers['retry-after'], '1', 'a part of a second is a whole one');
  app.clock.advance(1);
  t.is(await createAndEnd(app, token, parking.id), 201, 'a token back after 2 s');
  t.is(await createAndEnd(app, token, parking.id), 429, 'and only one');

  // Another driver's bucket is its own.
  t.is(await createAndEnd(app, (await anotherDriver(app)).accessToken, parking.id), 201);
});

test('an open session is still 422 session_refused, and takes no token', async (t) => {
  const app = await testApp(t, { sessionCreateBurst: 2 });
  const parking = await seedParking(app);
  const { access_token: token } = await loggedIn(app);
  const created = await createSession(app, token, { parking_session: { secured_parking_id: parking.id } });
  t.is(created.statusCode, 201);
  for (let n = 0; n < 3; n += 1) {
    const again = await createSession(app, token, { parking_session: { secured_parking_id: parking.id } });
    t.is(again.statusCode, 422);
    t.is(errorBody(t, again).error, 'session_refused');
  }
  await finish(app, created.json<{ parking_session: { id: number } }>().parking_session.id);
  t.is(await createAndEnd(app, token, parking.id), 201, 'the refusals took nothing: the second token is there');
  t.is(await createAndEnd(app, token, parking.id), 429);
});

test("two API processes on one database share each driver's bucket", async (t) => {
  const first = await testApp(t, { sessionCreateBurst: 3 });
  const second = await testApp(t, { sessionCreateBurst: 3 }, { dir: first.dir });
  const parking = await seedParking(first);
  const { access_token: token } = await loggedIn(first);
  const outcomes: number[] = [];
  for (const app of [first, second, first, second, first]) outcomes.push(await createAndEnd(app, token, parking.id));
  t.deepEqual(outcomes, [201, 201, 201, 429, 429]);
});
