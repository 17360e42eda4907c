// POST /api/car_driver/parking_sessions (spec 4.4, every line of section 7),
// GET .../current, GET /api/car_driver/smart_keys and PUT .../finalize.
import test from 'ava';
import { FrameKind, openCommand, openSignedCommand } from '../../../firmware-protocol/index.js';
import { errorBody, loggedIn, testApp } from '../../helpers/api-app.js';
import {
  ACCESS_MODES,
  anotherDriver,
  authGet,
  createSession,
  finalize,
  openAccessCommand,
  seedParking,
} from '../../helpers/parking.js';
import { newIssuer } from '../../helpers/signed-box.js';
import { rowCount } from '../../helpers/store-rows.js';

const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/;

interface SessionBody {
  pay_url: string;
  amount: string;
  currency: string;
  extra_amount?: string;
  parking_session: Record<string, unknown> & {
    id: number;
    state: string;
    end_time: string;
    payment_state: string;
    exit_remaining_tries: number;
  };
  smart_key: Record<string, unknown> & {
    id: number;
    access_command: string;
    access_points: { access_point: { module_id: number; mac_address: string } }[];
  };
}

test('201: every field and type of 4.4, 2.5 and 2.6', async (t) => {
  const app = await testApp(t, { publicUrl: 'https://park.example' });
  const tokens = await loggedIn(app);
  const parking = await seedParking(app, {
    pricePerHourMinor: 250,
    maxDurationMinutes: 90,
    tries: 7,
    currency: 'CHF',
    name: 'Gare',
  });
  const response = await createSession(app, tokens.access_token, {
    parking_session: { secured_parking_id: parking.id },
  });
  t.is(response.statusCode, 201);
  const body = response.json<SessionBody>();
  t.deepEqual(Object.keys(body).sort(), ['amount', 'currency', 'parking_session', 'pay_url', 'smart_key']);
  t.is(body.amount, '3.75', '2.50 an hour for 90 minutes');
  t.is(body.currency, 'CHF');
  t.regex(body.pay_url, /^https:\/\/park\.example\/pay\/[A-Za-z0-9_-]{32}$/);

  const session = body.parking_session;
  t.deepEqual(Object.keys(session).sort(), [
    'end_time',
    'entrance_remaining_tries',
    'exit_remaining_tries',
    'id',
    'payment_state',
    'start_time',
    'state',
    'type',
  ]);
  t.like(session, {
    type: 'pay_per_use',
    state: 'entering',
    entrance_remaining_tries: 7,
    exit_remaining_tries: 7,
    payment_state: 'pending',
  });
  t.true(Number.isInteger(session.id));
  t.regex(session.start_time as string, ISO_WITH_OFFSET);
  t.is(session.start_time, new Date(app.clock.now()).toISOString().replace('Z', '+00:00'));
  t.is(Date.parse(session.end_time) - Date.parse(session.start_time as string), 90 * 60_000);

  const key = body.smart_key;
  // Spec 2.6's fields plus revoked_at (null until an operator revokes the key).
  t.deepEqual(Object.keys(key).sort(), [
    'access_command',
    'access_points',
    'description',
    'end_time',
    'id',
    'is_active',
    'is_online',
    'name',
    'revoked_at',
    'secured_parking_id',
    'start_time',
    'type',
  ]);
  t.is(key.revoked_at, null);
  t.like(key, {
    secured_parking_id: parking.id,
    name: 'Gare',
    is_active: true,
    type: 'session_access',
    is_online: false,
    start_time: session.start_time,
    end_time: session.end_time,
  });
  t.true(Number.isInteger(key.id));
  t.is(typeof key.description, 'string');
  t.deepEqual(
    key.access_points,
    parking.boxes.map((box) => ({ access_point: { module_id: box.moduleId, mac_address: box.macAddress } })),
  );
  for (const point of key.access_points) t.regex(point.access_point.mac_address, /^[0-9A-F]{2}(:[0-9A-F]{2}){5}$/);
});

for (const accessMode of ACCESS_MODES) {
  test(`the access command opens as a box of the parking opens it and holds what it should (${accessMode})`, async (t) => {
    const app = await testApp(t);
    const tokens = await loggedIn(app);
    const parking = await seedParking(app, {
      maxDurationMinutes: 60,
      tries: 3,
      boxes: ['entrance', 'entrance', 'exit'],
      accessMode,
    });
    app.clock.advance(1234); // not on a whole second: the window is whole seconds anyway
    const body = (
      await createSession(app, tokens.access_token, { parking_session: { secured_parking_id: parking.id } })
    ).json<SessionBody>();
    const frame = Buffer.from(body.smart_key.access_command, 'base64');
    t.is(frame.toString('base64'), body.smart_key.access_command, 'standard, padded base64');
    const opened = openAccessCommand(parking, frame);
    if (!opened.ok)
      return t.fail(
        `does not open under the parking's ${accessMode === 'signed' ? 'issuer public key' : 'parking key'}`,
      );
    const { command } = opened;
    t.is(command.kind, parking.accessKind);
    t.is(command.keyId, body.smart_key.id);
    t.is(command.scope, parking.id);
    if (command.kind !== FrameKind.ACCESS && command.kind !== FrameKind.ACCESS_SIGNED) return;
    t.deepEqual(command.body, {
      notBefore: Date.parse(body.parking_session.start_time as string) / 1000,
      notAfter: Date.parse(body.parking_session.end_time) / 1000,
      maxEntries: 3,
      maxExits: 3,
      moduleIds: parking.boxes.map((box) => box.moduleId),
    });
    t.false(openCommand(frame, Buffer.alloc(16)).ok, 'not under another parking key');
    t.false(openSignedCommand(frame, newIssuer().publicKey).ok, 'not under another issuer key');
    // Which issuer key signed it is kept (rotation needs it); null when sealed.
    const { signed_by: signedBy } = await app.ctx.store.kysely
      .selectFrom('smart_keys')
      .select('signed_by')
      .where('id', '=', body.smart_key.id)
      .executeTakeFirstOrThrow();
    t.is(signedBy, parking.issuer?.publicKey.toString('hex') ?? null);
    // GET returns the same bytes.
    const keys = (await authGet(app, tokens.access_token, '/api/car_driver/smart_keys')).json<
      { access_command: string }[]
    >();
    t.is(keys[0]?.access_command, body.smart_key.access_command);
  });
}

test('amount: price per hour × minutes / 60 in minor units, rounded half up', async (t) => {
  const app = await testApp(t);
  const cases: [number, number, string][] = [
    [250, 120, '5.00'],
    [1, 30, '0.01'],
    [1, 29, '0.00'],
    [199, 7, '0.23'],
    [0, 60, '0.00'],
    [99_999_999_999, 43_200, '719999999992.80'],
  ];
  for (const [price, minutes, expected] of cases) {
    const { accessToken } = await anotherDriver(app);
    const parking = await seedParking(app, { pricePerHourMinor: price, maxDurationMinutes: minutes });
    const response = await createSession(app, accessToken, { parking_session: { secured_parking_id: parking.id } });
    t.is(response.json<SessionBody>().amount, expected, `${price} × ${minutes}`);
  }
});

test('400 when parking_session or secured_parking_id is missing', async (t) => {
  const app = await testApp(t);
  const tokens = await loggedIn(app);
  const cases: [unknown, string][] = [
    [{}, 'parking_session'],
    [{ parking_session: null }, 'parking_session'],
    [{ other: 1 }, 'parking_session'],
    [[], 'parking_session'],
    [undefined, 'parking_session'],
    [{ parking_session: {} }, 'parking_session.secured_parking_id'],
    [{ parking_session: { secured_parking_id: null } }, 'parking_session.secured_parking_id'],
  ];
  for (const [payload, path] of cases) {
    const response = await createSession(app, tokens.access_token, payload);
    t.is(response.statusCode, 400, JSON.stringify(payload));
    const body = errorBody(t, response);
    t.is(body.error, 'missing_parameter');
    t.is(body.details[0]?.path, path);
  }
});

test('401 without a token or with a bad one, whatever the body', async (t) => {
  const app = await testApp(t);
  const parking = await seedParking(app);
  for (const token of [undefined, 'nope']) {
    for (const payload of [{ parking_session: { secured_parking_id: parking.id } }, {}, '{bad json']) {
      const response = await createSession(app, token, payload);
      t.is(response.statusCode, 401);
      t.true(['unauthorized', 'invalid_token'].includes(errorBody(t, response).error));
    }
  }
});

test('404 for an unknown parking', async (t) => {
  const app = await testApp(t);
  const tokens = await loggedIn(app);
  for (const id of [999, 0, -1, 2 ** 40]) {
    const response = await createSession(app, tokens.access_token, { parking_session: { secured_parking_id: id } });
    t.is(response.statusCode, 404, String(id));
    const body = errorBody(t, response);
    t.is(body.error, 'resource_not_found');
    t.is(body.details[0]?.path, 'parking_session.secured_parking_id');
  }
});

test('422 with messages: wrong types, inactive parking, no boxes, an open session', async (t) => {
  const app = await testApp(t);
  const tokens = await loggedIn(app);
  for (const payload of [
    { parking_session: { secured_parking_id: '1' } },
    { parking_session: { secured_parking_id: 1.5 } },
    { parking_session: 'x' },
  ]) {
    const response = await createSession(app, tokens.access_token, payload);
    t.is(response.statusCode, 422, JSON.stringify(payload));
    t.is(errorBody(t, response).error, 'validation_failed');
  }
  const inactive = await seedParking(app);
  await app.ctx.store.kysely
    .updateTable('secured_parkings')
    .set({ is_active: 0 })
    .where('id', '=', inactive.id)
    .execute();
  const noBoxes = await seedParking(app, { boxes: [] });
  const refusal = async (id: number) => {
    const response = await createSession(app, tokens.access_token, { parking_session: { secured_parking_id: id } });
    t.is(response.statusCode, 422);
    const body = errorBody(t, response);
    t.is(body.error, 'session_refused');
    return body.details.map((detail) => detail.message).join('; ');
  };
  t.regex(await refusal(inactive.id), /not active/);
  t.regex(await refusal(noBoxes.id), /no boxes/);
  const parking = await seedParking(app);
  t.is(
    (await createSession(app, tokens.access_token, { parking_session: { secured_parking_id: parking.id } })).statusCode,
    201,
  );
  t.regex(await refusal(parking.id), /already has an open parking session/);
  t.is(await rowCount(app.ctx.store, 'parking_sessions'), 1);
});

test('two simultaneous creations by one driver: one 201, one 422, one open session', async (t) => {
  const app = await testApp(t);
  const tokens = await loggedIn(app);
  const parking = await seedParking(app);
  const payload = { parking_session: { secured_parking_id: parking.id } };
  const responses = await Promise.all([
    createSession(app, tokens.access_token, payload),
    createSession(app, tokens.access_token, payload),
    createSession(app, tokens.access_token, payload),
  ]);
  t.deepEqual(responses.map((response) => response.statusCode).sort(), [201, 422, 422]);
  const open = await app.ctx.store.kysely
    .selectFrom('parking_sessions')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('state', '<>', 'finished')
    .executeTakeFirstOrThrow();
  t.is(Number(open.n), 1);
});

test('the partial unique index holds one open session per driver even past the service checks', async (t) => {
  const app = await testApp(t);
  const tokens = await loggedIn(app);
  const parking = await seedParking(app);
  t.is(
    (await createSession(app, tokens.access_token, { parking_session: { secured_parking_id: parking.id } })).statusCode,
    201,
  );
  // Another process would get here with a stale check: the index refuses.
  t.is(
    await app.ctx.sessions.insert(
      { userId: 1, parkingId: parking.id, startTime: 0, endTime: 1, tries: 1, amountMinor: 0, currency: 'EUR' },
      0,
    ),
    undefined,
  );
});

test('GET current: the open session in the shape of the 201 body, 404 when none, 401', async (t) => {
  const app = await testApp(t);
  const tokens = await loggedIn(app);
  const none = await authGet(app, tokens.access_token, '/api/car_driver/parking_sessions/current');
  t.is(none.statusCode, 404);
  t.is(errorBody(t, none).error, 'resource_not_found');
  const parking = await seedParking(app);
  const created = (
    await createSession(app, tokens.access_token, { parking_session: { secured_parking_id: parking.id } })
  ).json<SessionBody>();
  const current = await authGet(app, tokens.access_token, '/api/car_driver/parking_sessions/current');
  t.is(current.statusCode, 200);
  t.deepEqual(current.json(), created);
  t.is((await app.app.inject({ method: 'GET', url: '/api/car_driver/parking_sessions/current' })).statusCode, 401);
  const other = await anotherDriver(app);
  t.is(
    (await authGet(app, other.accessToken, '/api/car_driver/parking_sessions/current')).statusCode,
    404,
    "never another driver's",
  );
});

test("GET smart_keys: the driver's keys only, in the 2.6 structure", async (t) => {
  const app = await testApp(t);
  const tokens = await loggedIn(app);
  const other = await anotherDriver(app);
  const parking = await seedParking(app);
  t.deepEqual((await authGet(app, tokens.access_token, '/api/car_driver/smart_keys')).json(), []);
  const mine = (
    await createSession(app, tokens.access_token, { parking_session: { secured_parking_id: parking.id } })
  ).json<SessionBody>();
  const theirs = (
    await createSession(app, other.accessToken, { parking_session: { secured_parking_id: parking.id } })
  ).json<SessionBody>();
  const response = await authGet(app, tokens.access_token, '/api/car_driver/smart_keys');
  t.is(response.statusCode, 200);
  t.deepEqual(response.json(), [mine.smart_key]);
  t.deepEqual((await authGet(app, other.accessToken, '/api/car_driver/smart_keys')).json(), [theirs.smart_key]);
  t.is((await app.app.inject({ method: 'GET', url: '/api/car_driver/smart_keys' })).statusCode, 401);
});

test('finalize within the window: end_time now, amount for the minutes used (rounded up), nothing extra', async (t) => {
  const app = await testApp(t);
  const tokens = await loggedIn(app);
  const parking = await seedParking(app, { pricePerHourMinor: 250, maxDurationMinutes: 120 });
  const created = (
    await createSession(app, tokens.access_token, { parking_session: { secured_parking_id: parking.id } })
  ).json<SessionBody>();
  app.clock.advance(45 * 60_000 + 1); // 46 minutes started
  const response = await finalize(app, tokens.access_token, created.parking_session.id);
  t.is(response.statusCode, 200);
  const body = response.json<SessionBody>();
  t.is(body.amount, '1.92', '250 × 46 / 60 = 191.67, rounded up');
  t.is(body.extra_amount, '0.00');
  t.is(body.parking_session.state, 'exiting');
  t.is(body.parking_session.end_time, new Date(app.clock.now()).toISOString().replace('Z', '+00:00'));
  t.is(body.pay_url, created.pay_url, 'still the one payment');
  t.is(body.smart_key.id, created.smart_key.id, 'no new key');
  const again = await finalize(app, tokens.access_token, created.parking_session.id);
  t.is(again.statusCode, 422);
  t.is(errorBody(t, again).error, 'session_finished');
});

for (const accessMode of ACCESS_MODES) {
  test(`finalize past the window: the extra due, a new pay_url, an exit key for EXIT_KEY_MINUTES (${accessMode})`, async (t) => {
    const app = await testApp(t, { exitKeyMinutes: 30 });
    const tokens = await loggedIn(app);
    const parking = await seedParking(app, { pricePerHourMinor: 600, maxDurationMinutes: 60, tries: 4, accessMode });
    const created = (
      await createSession(app, tokens.access_token, { parking_session: { secured_parking_id: parking.id } })
    ).json<SessionBody>();
    app.clock.advance(90 * 60_000);
    const body = (await finalize(app, tokens.access_token, created.parking_session.id)).json<SessionBody>();
    t.is(body.amount, '9.00');
    t.is(body.extra_amount, '3.00');
    t.not(body.pay_url, created.pay_url);
    t.regex(body.pay_url, /\/pay\/[A-Za-z0-9_-]{32}$/);
    t.is(body.parking_session.exit_remaining_tries, 4);
    const key = body.smart_key;
    t.not(key.id, created.smart_key.id);
    t.deepEqual(
      key.access_points.map((point) => point.access_point.module_id),
      [parking.exit.moduleId],
    );
    const opened = openAccessCommand(parking, Buffer.from(key.access_command, 'base64'));
    if (!opened.ok || opened.command.kind !== parking.accessKind) return t.fail('exit key does not open');
    const now = app.clock.now() / 1000;
    t.deepEqual(opened.command.body, {
      notBefore: now,
      notAfter: now + 30 * 60,
      maxEntries: 0,
      maxExits: 4,
      moduleIds: [parking.exit.moduleId],
    });
    t.is((await authGet(app, tokens.access_token, '/api/car_driver/smart_keys')).json<unknown[]>().length, 2);
    // Visible in GET current until paid.
    t.deepEqual(
      (await authGet(app, tokens.access_token, '/api/car_driver/parking_sessions/current')).json<SessionBody>()
        .smart_key,
      key,
    );
  });
}

test("finalize: 404 for another driver's or an unknown session, 401 without a token", async (t) => {
  const app = await testApp(t);
  const tokens = await loggedIn(app);
  const other = await anotherDriver(app);
  const parking = await seedParking(app);
  const created = (
    await createSession(app, tokens.access_token, { parking_session: { secured_parking_id: parking.id } })
  ).json<SessionBody>();
  for (const id of [created.parking_session.id, 9999, 'abc']) {
    const response = await finalize(app, other.accessToken, id);
    t.is(response.statusCode, 404, String(id));
    t.is(errorBody(t, response).error, 'resource_not_found');
  }
  t.is(
    (
      await app.app.inject({
        method: 'PUT',
        url: `/api/car_driver/parking_sessions/${created.parking_session.id}/finalize`,
      })
    ).statusCode,
    401,
  );
});

test('the OpenAPI document lists the session, key and pay routes', async (t) => {
  const app = await testApp(t);
  const paths = (await app.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
    paths: Record<string, unknown>;
  }>().paths;
  for (const path of [
    '/api/car_driver/parking_sessions',
    '/api/car_driver/parking_sessions/current',
    '/api/car_driver/parking_sessions/{id}/finalize',
    '/api/car_driver/smart_keys',
    '/pay/{token}',
  ]) {
    t.truthy(paths[path], path);
  }
});
