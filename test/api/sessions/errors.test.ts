// The session service refuses with domain errors: a
// DomainError, never an HTTP type, which the parking session routes map
// through the registry to the same status and body as before.
import test from 'ava';
import { DomainError } from '../../../api/http/domain-error.js';
import { ApiError } from '../../../api/http/errors.js';
import { createSession as createSessionOf, finalizeSession } from '../../../api/sessions/service.js';
import { DRIVER, errorBody, loggedIn, testApp, type TestApp } from '../../helpers/api-app.js';
import { anotherDriver, createSession, finalize, seedParking } from '../../helpers/parking.js';

async function driverId(app: TestApp): Promise<number> {
  const user = await app.ctx.users.findByEmail(DRIVER.email);
  if (!user) throw new Error('the driver is not registered');
  return user.id;
}

test('the service raises DomainErrors: not_found for an unknown parking or session, refused for a refusal', async (t) => {
  const app = await testApp(t);
  await loggedIn(app);
  const userId = await driverId(app);
  const domain = async (work: () => Promise<unknown>): Promise<DomainError> => {
    const error = await t.throwsAsync(work);
    t.false(error instanceof ApiError, 'no HTTP type out of the domain');
    if (!(error instanceof DomainError)) throw new Error(`not a DomainError: ${String(error)}`);
    return error;
  };
  t.like(await domain(() => createSessionOf(app.ctx, userId, 999)), {
    kind: 'not_found',
    message: 'no secured parking with id 999',
  });
  const noBoxes = await seedParking(app, { boxes: [] });
  t.like(await domain(() => createSessionOf(app.ctx, userId, noBoxes.id)), {
    kind: 'refused',
    message: 'the secured parking has no boxes yet',
  });
  t.like(await domain(() => finalizeSession(app.ctx, userId, 999)), {
    kind: 'not_found',
    message: 'no parking session 999 of this driver',
  });
  const { session } = await createSessionOf(app.ctx, userId, (await seedParking(app)).id);
  await finalizeSession(app.ctx, userId, session.id);
  t.like(await domain(() => finalizeSession(app.ctx, userId, session.id)), { kind: 'refused' });
});

test('HTTP: each refusal keeps its status and its whole body', async (t) => {
  const app = await testApp(t);
  const tokens = await loggedIn(app);
  const post = async (parkingId: number) => {
    const response = await createSession(app, tokens.access_token, {
      parking_session: { secured_parking_id: parkingId },
    });
    return { status: response.statusCode, body: errorBody(t, response) };
  };
  const path = 'parking_session.secured_parking_id';
  t.deepEqual(await post(999), {
    status: 404,
    body: {
      error: 'resource_not_found',
      message: 'No such resource; details name the id.',
      details: [{ path, message: 'no secured parking with id 999' }],
    },
  });
  const closed = await seedParking(app, { boxes: [] });
  await app.ctx.store.kysely
    .updateTable('secured_parkings')
    .set({ is_active: 0 })
    .where('id', '=', closed.id)
    .execute();
  const refusedMessage = 'The parking session cannot be created; see details.';
  t.deepEqual(await post(closed.id), {
    status: 422,
    body: {
      error: 'session_refused',
      message: refusedMessage,
      details: [
        { path, message: 'the secured parking is not active' },
        { path, message: 'the secured parking has no boxes yet' },
      ],
    },
  });
  const parking = await seedParking(app);
  const created = await createSession(app, tokens.access_token, {
    parking_session: { secured_parking_id: parking.id },
  });
  const sessionId = created.json<{ parking_session: { id: number } }>().parking_session.id;
  t.deepEqual(await post(parking.id), {
    status: 422,
    body: {
      error: 'session_refused',
      message: refusedMessage,
      details: [{ path, message: `the driver already has an open parking session (id ${sessionId}, entering)` }],
    },
  });

  const put = async (id: number, accessToken = tokens.access_token) => {
    const response = await finalize(app, accessToken, id);
    return { status: response.statusCode, body: errorBody(t, response) };
  };
  t.deepEqual(await put(9999), {
    status: 404,
    body: {
      error: 'resource_not_found',
      message: 'No such resource; details name the id.',
      details: [{ path: 'id', message: 'no parking session 9999 of this driver' }],
    },
  });
  t.is((await finalize(app, tokens.access_token, sessionId)).statusCode, 200);
  const finishedMessage = 'The parking session is already finished or finalized.';
  t.deepEqual(await put(sessionId), {
    status: 422,
    body: {
      error: 'session_finished',
      message: finishedMessage,
      details: [
        {
          path: 'id',
          message: 'the parking session was already finalized (or the driver exited); it finishes once paid',
        },
      ],
    },
  });
  // A free parking's session is paid at once, so finalize finishes it.
  const other = await anotherDriver(app);
  const free = await seedParking(app, { pricePerHourMinor: 0 });
  const freeSession = (
    await createSession(app, other.accessToken, { parking_session: { secured_parking_id: free.id } })
  ).json<{ parking_session: { id: number } }>().parking_session.id;
  t.is((await finalize(app, other.accessToken, freeSession)).statusCode, 200);
  t.deepEqual(await put(freeSession, other.accessToken), {
    status: 422,
    body: {
      error: 'session_finished',
      message: finishedMessage,
      details: [{ path: 'id', message: 'the parking session is already finished' }],
    },
  });
});
