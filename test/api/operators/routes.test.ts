// The operator HTTP API (/api/operator/...). The real app (testApp,
// app.inject): operator tokens made by the domain service `admin operator
// add` calls, a driver's real token, parkings, sessions and box logs seeded
// through the services and routes that make them.
import test, { type ExecutionContext } from 'ava';
import type { LightMyRequestResponse } from 'fastify';
import { addOperator, removeOperator } from '../../../api/operators/accounts.js';
import { Barrier, ResponseOffset, Status } from '../../../firmware-protocol/index.js';
import { errorBody, loggedIn, me, testApp, type TestApp } from '../../helpers/api-app.js';
import { boxAnswer, boxLog, postBoxLogs } from '../../helpers/box-logs.js';
import { createSession, seedParking, type SeededParking } from '../../helpers/parking.js';

async function operator(app: TestApp, name = 'bench'): Promise<string> {
  return (await addOperator(app.ctx.store, name, app.clock.now())).token;
}

function get(app: TestApp, url: string, authorization?: string): Promise<LightMyRequestResponse> {
  return app.app.inject({ method: 'GET', url, headers: authorization === undefined ? {} : { authorization } });
}

function post(app: TestApp, url: string, authorization?: string): Promise<LightMyRequestResponse> {
  return app.app.inject({ method: 'POST', url, headers: authorization === undefined ? {} : { authorization } });
}

const bearer = (token: string) => `Bearer ${token}`;

/** A driver with a session (and its smart key) at `parking`. */
async function driverSession(
  t: ExecutionContext,
  app: TestApp,
  parking: SeededParking,
): Promise<{ accessToken: string; sessionId: number; smartKeyId: number }> {
  const tokens = await loggedIn(app);
  const created = await createSession(app, tokens.access_token, {
    parking_session: { secured_parking_id: parking.id },
  });
  t.is(created.statusCode, 201, created.body);
  const body = created.json<{ parking_session: { id: number }; smart_key: { id: number } }>();
  return { accessToken: tokens.access_token, sessionId: body.parking_session.id, smartKeyId: body.smart_key.id };
}

async function storeLog(
  app: TestApp,
  parking: SeededParking,
  fields: { moduleId: number; smartKeyId?: number | null; verified?: boolean; status?: number; boxSeq?: number },
): Promise<number> {
  const verified = fields.verified ?? false;
  const row = await app.ctx.store.kysely
    .insertInto('box_logs')
    .values({
      source: 'http',
      fo_user_id: null,
      smart_key_id: fields.smartKeyId ?? null,
      equipment_id: fields.moduleId,
      secured_parking_id: parking.id,
      type: 'in',
      command: null,
      command_decrypted: null,
      response: null,
      response_decrypted: null,
      offline: 0,
      created_at: '2026-01-01 00:00:00',
      latitude: null,
      longitude: null,
      verified: verified ? 1 : 0,
      box_seq: verified ? (fields.boxSeq ?? 1) : null,
      status: verified ? (fields.status ?? Status.OK) : null,
      received_at: app.clock.now(),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

const OPERATOR_ROUTES: [method: 'GET' | 'POST', url: string][] = [
  ['GET', '/api/operator/parkings'],
  ['GET', '/api/operator/sessions'],
  ['GET', '/api/operator/box_logs'],
  ['POST', '/api/operator/smart_keys/1/revoke'],
  ['GET', '/api/operator/parkings/1/forwarding'],
  ['POST', '/api/operator/parkings/1/forwarding/retry'],
  ['POST', '/api/operator/boxes/1/commands'],
  ['GET', '/api/operator/boxes/1/capture'],
  ['POST', '/api/operator/events/tickets'],
  ['GET', '/api/operator/events'],
  ['GET', '/api/operator/no_such_route'],
];

test("every operator route: no token 401 unauthorized, a bad one 401 invalid_token, a driver's 403 operator_required", async (t) => {
  const app = await testApp(t);
  const driver = await loggedIn(app);
  for (const [method, url] of OPERATOR_ROUTES) {
    const cases: [string | undefined, number, string][] = [
      [undefined, 401, 'unauthorized'],
      ['Bearer ' + 'A'.repeat(43), 401, 'invalid_token'],
      ['Basic YTpi', 401, 'invalid_token'],
      [bearer(driver.access_token), 403, 'operator_required'],
    ];
    for (const [authorization, status, code] of cases) {
      const response = await app.app.inject({
        method,
        url,
        headers: authorization === undefined ? {} : { authorization },
      });
      t.is(response.statusCode, status, `${method} ${url} with ${authorization ?? 'nothing'}`);
      t.is(errorBody(t, response).error, code, `${method} ${url}`);
    }
  }
});

test('an operator token is accepted; removed, it is refused on the next request (no cache)', async (t) => {
  const app = await testApp(t);
  const token = await operator(app);
  t.is((await get(app, '/api/operator/parkings', bearer(token))).statusCode, 200);
  await removeOperator(app.ctx.store, 'bench');
  const after = await get(app, '/api/operator/parkings', bearer(token));
  t.is(after.statusCode, 401);
  t.is(errorBody(t, after).error, 'invalid_token');
});

test('GET /api/operator/parkings: each parking, its boxes and their last known state, no secret', async (t) => {
  const app = await testApp(t);
  const token = await operator(app);
  const sealed = await seedParking(app);
  const signed = await seedParking(app, { accessMode: 'signed', boxes: ['entrance'] });
  const response = await get(app, '/api/operator/parkings', bearer(token));
  t.is(response.statusCode, 200, response.body);
  const parkings = response.json<{ id: number; access_mode: string; boxes: Record<string, unknown>[] }[]>();
  t.deepEqual(
    parkings.map((parking) => [parking.id, parking.access_mode, parking.boxes.length]),
    [
      [sealed.id, 'sealed', 2],
      [signed.id, 'signed', 1],
    ],
  );
  t.like(parkings[0]?.boxes[0], {
    module_id: sealed.entrance.moduleId,
    direction: 'entrance',
    mac_address: sealed.entrance.macAddress,
    last_seen_at: null,
    battery_mv: null,
    box_time_drift_seconds: null,
    last_box_seq: null,
    pending_control_commands: [],
    availability: 'unknown',
    availability_reason: null,
    availability_since: null,
    gateway_id: null,
  });
  t.is(parkings[0]?.boxes[0]?.last_response, null);
  for (const secret of ['parking_key', 'issuer_private_key', 'box_key', 'mqtt_password_hash', 'forwarding_secret'])
    t.false(response.body.includes(secret), secret);
  t.false(response.body.includes(sealed.parkingKey?.toString('hex') ?? 'none'));
  t.false(response.body.includes(sealed.entrance.boxKey.toString('hex')));
});

test("GET /api/operator/parkings: a box's last verified response gives battery, seen, drift, sequence, barrier and via", async (t) => {
  const app = await testApp(t);
  const token = await operator(app);
  const parking = await seedParking(app);
  const driver = await loggedIn(app);
  const userId = (await me(app, bearer(driver.access_token))).json<{ id: number }>().id;
  const response = boxAnswer(parking.exit, null, { barrier: Barrier.OPEN, batteryMv: 3456 });
  const posted = await postBoxLogs(app, driver.access_token, {
    box_logs: [
      boxLog({ foUserId: userId, smartKeyId: null, box: parking.exit, parkingId: parking.id, command: null, response }),
    ],
  });
  t.is(posted.statusCode, 201, posted.body);
  const logId = posted.json<{ box_logs: { id: number; verified: boolean }[] }>().box_logs[0];
  t.true(logId?.verified);
  const parkings = (await get(app, '/api/operator/parkings', bearer(token))).json<
    { boxes: Record<string, unknown>[] }[]
  >();
  const exit = parkings[0]?.boxes.find((box) => box.module_id === parking.exit.moduleId);
  t.like(exit, {
    battery_mv: 3456,
    last_box_seq: response.readUInt32BE(ResponseOffset.boxSeq),
    last_response: { box_log_id: logId?.id, status: 'OK', barrier: 'open', via: 'http' },
  });
  t.is(typeof exit?.last_seen_at, 'string');
  t.is(typeof exit?.box_time_drift_seconds, 'number');
});

test('GET /api/operator/sessions: newest first, filtered by state and parking; bad filters 422/404 naming the field', async (t) => {
  const app = await testApp(t);
  const token = await operator(app);
  const parking = await seedParking(app);
  const other = await seedParking(app);
  const { sessionId } = await driverSession(t, app, parking);
  const all = await get(app, '/api/operator/sessions', bearer(token));
  t.is(all.statusCode, 200, all.body);
  const sessions = all.json<{ id: number; state: string; parking_id: number; email: string }[]>();
  t.is(sessions.length, 1);
  t.like(sessions[0], { id: sessionId, parking_id: parking.id, state: 'entering', email: 'ada@example.com' });
  t.is(
    (await get(app, `/api/operator/sessions?state=entering&parking_id=${parking.id}`, bearer(token))).json<unknown[]>()
      .length,
    1,
  );
  t.is((await get(app, '/api/operator/sessions?state=finished', bearer(token))).json<unknown[]>().length, 0);
  t.is((await get(app, `/api/operator/sessions?parking_id=${other.id}`, bearer(token))).json<unknown[]>().length, 0);
  const cases: [string, number, string][] = [
    ['state=open', 422, 'state'],
    ['state=active&state=entering', 422, 'state'],
    ['parking_id=-1', 422, 'parking_id'],
    ['parking_id=1e3', 422, 'parking_id'],
    ['parking_id=99999', 404, 'parking_id'],
    ['limit=0', 422, 'limit'],
    ['limit=501', 422, 'limit'],
  ];
  for (const [query, status, field] of cases) {
    const response = await get(app, `/api/operator/sessions?${query}`, bearer(token));
    t.is(response.statusCode, status, query);
    t.is(errorBody(t, response).details[0]?.path, field, query);
  }
});

test('GET /api/operator/box_logs: newest first, filters, cursor pages stable while logs arrive', async (t) => {
  const app = await testApp(t);
  const token = await operator(app);
  const parking = await seedParking(app);
  const { sessionId, smartKeyId } = await driverSession(t, app, parking);
  const entrance = parking.entrance.moduleId;
  const exit = parking.exit.moduleId;
  const ids = [
    await storeLog(app, parking, { moduleId: entrance }),
    await storeLog(app, parking, { moduleId: entrance, verified: true, status: Status.OK, boxSeq: 1, smartKeyId }),
    await storeLog(app, parking, { moduleId: exit, verified: true, status: Status.BARRIER_FAULT, boxSeq: 1 }),
    await storeLog(app, parking, { moduleId: exit }),
    await storeLog(app, parking, { moduleId: entrance, verified: true, status: Status.OK, boxSeq: 2 }),
  ];
  const page = async (query: string) => {
    const response = await get(app, `/api/operator/box_logs?${query}`, bearer(token));
    t.is(response.statusCode, 200, `${query}: ${response.body}`);
    return response.json<{
      box_logs: { id: number; status: string | null; verified: boolean; session_id: number | null }[];
      next_cursor: string | null;
    }>();
  };
  const newest = [...ids].reverse();
  t.deepEqual(
    (await page('')).box_logs.map((log) => log.id),
    newest,
  );
  t.deepEqual(
    (await page(`box=${exit}`)).box_logs.map((log) => log.id),
    [ids[3], ids[2]],
  );
  t.deepEqual(
    (await page('status=BARRIER_FAULT')).box_logs.map((log) => [log.id, log.status]),
    [[ids[2], 'BARRIER_FAULT']],
  );
  t.deepEqual(
    (await page('verified=false')).box_logs.map((log) => [log.id, log.verified, log.status]),
    [
      [ids[3], false, null],
      [ids[0], false, null],
    ],
  );
  t.deepEqual(
    (await page(`session=${sessionId}`)).box_logs.map((log) => [log.id, log.session_id]),
    [[ids[1], sessionId]],
  );

  // Pages of two; logs stored between pages do not shift them.
  const first = await page('limit=2');
  t.deepEqual(
    first.box_logs.map((log) => log.id),
    newest.slice(0, 2),
  );
  t.truthy(first.next_cursor);
  await storeLog(app, parking, { moduleId: entrance });
  await storeLog(app, parking, { moduleId: exit });
  const second = await page(`limit=2&cursor=${first.next_cursor ?? ''}`);
  t.deepEqual(
    second.box_logs.map((log) => log.id),
    newest.slice(2, 4),
  );
  const third = await page(`limit=2&cursor=${second.next_cursor ?? ''}`);
  t.deepEqual(
    third.box_logs.map((log) => log.id),
    newest.slice(4),
  );
  t.is(third.next_cursor, null);
});

test('GET /api/operator/box_logs: hostile queries get a 422 naming the field, never a 500', async (t) => {
  const app = await testApp(t);
  const token = await operator(app);
  const cases: [string, string][] = [
    ['box=x', 'box'],
    ['box=-1', 'box'],
    ['box=99999999999', 'box'],
    ['session=0', 'session'],
    ['status=ok', 'status'],
    ['status=OK&status=REPLAY', 'status'],
    ['verified=yes', 'verified'],
    ['cursor=' + 'A'.repeat(65), 'cursor'],
    ['cursor=%00', 'cursor'],
    ['cursor=Zm9vYmFy', 'cursor'],
    [`cursor=${Buffer.from('bl1.-5').toString('base64url')}`, 'cursor'],
    ['limit=99999999999999999999', 'limit'],
    ['limit=1.5', 'limit'],
  ];
  for (const [query, field] of cases) {
    const response = await get(app, `/api/operator/box_logs?${query}`, bearer(token));
    t.is(response.statusCode, 422, `${query}: ${response.body}`);
    t.is(errorBody(t, response).details[0]?.path, field, query);
  }
});

test("POST /api/operator/smart_keys/:id/revoke: revoked at once (the driver's open is refused), REVOKE queued; again changes nothing; unknown 404", async (t) => {
  const app = await testApp(t);
  const token = await operator(app);
  const parking = await seedParking(app, { isOnline: true });
  const { accessToken, smartKeyId } = await driverSession(t, app, parking);
  const response = await post(app, `/api/operator/smart_keys/${smartKeyId}/revoke`, bearer(token));
  t.is(response.statusCode, 200, response.body);
  const body = response.json<{
    smart_key_id: number;
    newly_revoked: boolean;
    pending: number;
    deliveries: { kind: string; module_id: number }[];
  }>();
  t.like(body, { smart_key_id: smartKeyId, newly_revoked: true });
  t.true(body.pending >= 1);
  t.true(body.deliveries.every((delivery) => delivery.kind === 'REVOKE'));
  t.is((await app.ctx.smartKeys.findById(smartKeyId))?.revoked_at, app.clock.now());
  const open = await app.app.inject({
    method: 'POST',
    url: `/api/car_driver/smart_keys/${smartKeyId}/open`,
    headers: { authorization: bearer(accessToken) },
    payload: { module_id: parking.entrance.moduleId },
  });
  t.is(errorBody(t, open).error, 'smart_key_revoked');
  const again = await post(app, `/api/operator/smart_keys/${smartKeyId}/revoke`, bearer(token));
  t.is(again.json<{ newly_revoked: boolean }>().newly_revoked, false);
  const unknown = await post(app, '/api/operator/smart_keys/424242/revoke', bearer(token));
  t.is(unknown.statusCode, 404);
  t.like(errorBody(t, unknown), {
    error: 'resource_not_found',
    details: [{ path: 'id', message: 'no smart key with id 424242' }],
  });
  for (const bad of ['abc', '0', '-1', '1.5', '9'.repeat(16)]) {
    const response = await post(app, `/api/operator/smart_keys/${bad}/revoke`, bearer(token));
    t.is(response.statusCode, 422, bad);
    t.is(errorBody(t, response).details[0]?.path, 'id', bad);
  }
});

test('forwarding per parking: status and retry through the service; an unknown parking is a 404 naming id', async (t) => {
  const app = await testApp(t);
  const token = await operator(app);
  const parking = await seedParking(app);
  const status = await get(app, `/api/operator/parkings/${parking.id}/forwarding`, bearer(token));
  t.is(status.statusCode, 200, status.body);
  t.deepEqual(status.json(), []);
  const retry = await post(app, `/api/operator/parkings/${parking.id}/forwarding/retry`, bearer(token));
  t.is(retry.statusCode, 200, retry.body);
  t.deepEqual(retry.json(), { parking_id: parking.id, revived_deliveries: 0, enabled_urls: [] });
  for (const [method, url] of [
    ['GET', '/api/operator/parkings/777/forwarding'],
    ['POST', '/api/operator/parkings/777/forwarding/retry'],
  ] as const) {
    const response = await app.app.inject({ method, url, headers: { authorization: bearer(token) } });
    t.is(response.statusCode, 404, url);
    t.like(errorBody(t, response), {
      error: 'resource_not_found',
      details: [{ path: 'id', message: 'no secured parking with id 777' }],
    });
  }
});

test('the OpenAPI document lists the operator routes under the operator tag with the operator security scheme', async (t) => {
  const app = await testApp(t);
  const document = (await get(app, '/openapi.json')).json<{
    paths: Record<string, Record<string, { tags?: string[]; security?: Record<string, unknown>[] }>>;
    components: { securitySchemes: Record<string, unknown> };
  }>();
  t.truthy(document.components.securitySchemes.operator);
  const operatorPaths = Object.keys(document.paths).filter((path) => path.startsWith('/api/operator/'));
  t.deepEqual(operatorPaths.sort(), [
    '/api/operator/box_logs',
    '/api/operator/boxes/{module_id}/capture',
    '/api/operator/boxes/{module_id}/commands',
    '/api/operator/boxes/{module_id}/conformance',
    '/api/operator/boxes/{module_id}/conformance/{run_id}/cancel',
    '/api/operator/boxes/{module_id}/reservation',
    '/api/operator/boxes/{module_id}/sim',
    '/api/operator/conformance/{run_id}',
    '/api/operator/conformance/{run_id}/junit.xml',
    '/api/operator/conformance/{run_id}/report.json',
    '/api/operator/control_commands',
    '/api/operator/control_commands/{id}/retry',
    '/api/operator/control_commands/{id}/skip',
    '/api/operator/events',
    '/api/operator/events/tickets',
    '/api/operator/parkings',
    '/api/operator/parkings/{id}/forwarding',
    '/api/operator/parkings/{id}/forwarding/retry',
    '/api/operator/runs',
    '/api/operator/runs/compare',
    '/api/operator/runs/{id}',
    '/api/operator/runs/{id}/end',
    '/api/operator/runs/{id}/junit',
    '/api/operator/runs/{id}/results',
    '/api/operator/sessions',
    '/api/operator/smart_keys/{id}/revoke',
  ]);
  for (const path of operatorPaths) {
    for (const operation of Object.values(document.paths[path] ?? {})) {
      t.deepEqual(operation.tags, ['operator'], path);
      t.deepEqual(operation.security, [{ operator: [] }], path);
    }
  }
});
