// POST /api/box_logs: every row of section 7, every field of 2.1, all or
// nothing, verification, duplicates, session effects and what boxes tell.
import test from 'ava';
import type { BoxLogInput } from '../../../api/box-logs/types.js';
import { Status } from '../../../firmware-protocol/index.js';
import { addOperator } from '../../../api/operators/accounts.js';
import { mintOperatorAccess } from '../../../api/smart-keys/operator-access.js';
import { errorBody, loggedIn, testApp, type TestApp } from '../../helpers/api-app.js';
import {
  boxAnswer,
  boxLog,
  controlCommand,
  countRows,
  ingestThroughGroup,
  postBoxLogs,
  type BoxLogsBody,
} from '../../helpers/box-logs.js';
import type { AccessMode } from '../../../api/parkings/repository.js';
import { ACCESS_MODES, anotherDriver, createSession, seedParking, type SeededParking } from '../../helpers/parking.js';
import { one } from '../../helpers/sql.js';

interface Fixture {
  app: TestApp;
  token: string;
  userId: number;
  parking: SeededParking;
  sessionId: number;
  keyId: number;
  command: Buffer;
}

async function fixture(
  t: Parameters<typeof testApp>[0],
  overrides: Parameters<typeof testApp>[1] = {},
  accessMode: AccessMode = 'sealed',
): Promise<Fixture> {
  const app = await testApp(t, { tokenTtlSeconds: 86_400, ...overrides });
  const tokens = await loggedIn(app);
  const parking = await seedParking(app, { pricePerHourMinor: 600, maxDurationMinutes: 60, tries: 10, accessMode });
  const body = (
    await createSession(app, tokens.access_token, { parking_session: { secured_parking_id: parking.id } })
  ).json<{
    parking_session: { id: number };
    smart_key: { id: number; access_command: string };
  }>();
  return {
    app,
    token: tokens.access_token,
    userId: 1,
    parking,
    sessionId: body.parking_session.id,
    keyId: body.smart_key.id,
    command: Buffer.from(body.smart_key.access_command, 'base64'),
  };
}

function accessLog(
  f: Fixture,
  response: Buffer | null,
  box = f.parking.entrance,
  extra: Partial<Parameters<typeof boxLog>[0]> = {},
) {
  return boxLog({
    foUserId: f.userId,
    smartKeyId: f.keyId,
    box,
    parkingId: f.parking.id,
    command: f.command,
    response,
    ...extra,
  });
}

const session = (f: Fixture) => f.app.ctx.sessions.findById(f.sessionId);

test('201 with {box_logs: [{id, verified, duplicate}]} in request order; every 2.1 field stored as sent', async (t) => {
  const f = await fixture(t);
  const verified = accessLog(f, boxAnswer(f.parking.entrance, f.command));
  const unverified = accessLog(f, Buffer.alloc(32, 1), f.parking.exit, {
    offline: true,
    createdAt: '2025-12-31 23:59:59',
  });
  const noResponse = boxLog({
    foUserId: f.userId,
    smartKeyId: null,
    box: f.parking.entrance,
    parkingId: f.parking.id,
    command: null,
    response: null,
    type: 'control',
  });
  delete noResponse.box_log.point_attributes; // optional
  const response = await postBoxLogs(f.app, f.token, { box_logs: [verified, unverified, noResponse] });
  t.is(response.statusCode, 201);
  const body = response.json<BoxLogsBody>();
  t.deepEqual(
    body.box_logs.map(({ verified: v, duplicate }) => [v, duplicate]),
    [
      [true, false],
      [false, false],
      [false, false],
    ],
  );
  const [first, second, third] = body.box_logs;
  if (first === undefined || second === undefined || third === undefined) return t.fail('three box logs');
  t.true(first.id < second.id && second.id < third.id);
  const row = await one(f.app.ctx.store, 'SELECT * FROM box_logs WHERE id = ?', second.id);
  const sent = unverified.box_log;
  t.like(row, {
    source: 'http',
    fo_user_id: sent.fo_user_id,
    smart_key_id: sent.smart_key_id,
    equipment_id: sent.equipment_id,
    secured_parking_id: sent.secured_parking_id,
    type: 'out',
    command: sent.command,
    command_decrypted: sent.command_decrypted,
    response: sent.response,
    response_decrypted: sent.response_decrypted,
    offline: 1,
    created_at: '2025-12-31 23:59:59',
    latitude: 48.8566,
    longitude: 2.3522,
    verified: 0,
  });
  t.like(await one(f.app.ctx.store, 'SELECT * FROM box_logs WHERE id = ?', third.id), {
    smart_key_id: null,
    command: null,
    response: null,
    latitude: null,
    type: 'control',
  });
});

test('401 without a valid token, whatever the body', async (t) => {
  const f = await fixture(t);
  for (const token of [undefined, 'not-a-token']) {
    for (const body of [{ box_logs: [] }, '{bad', { box_logs: 'x' }]) {
      const response = await postBoxLogs(f.app, token, body);
      t.is(response.statusCode, 401);
      t.true(['unauthorized', 'invalid_token'].includes(errorBody(t, response).error));
    }
  }
});

test('422 naming the element and field of each bad value', async (t) => {
  const f = await fixture(t);
  const good = () => accessLog(f, null).box_log;
  const cases: [unknown, string][] = [
    [{}, 'box_logs'],
    [{ box_logs: {} }, 'box_logs'],
    [{ box_logs: [1] }, 'box_logs[0]'],
    [{ box_logs: [{}] }, 'box_logs[0].box_log'],
    [{ box_logs: [{ box_log: { ...good(), type: 'sideways' } }] }, 'box_logs[0].box_log.type'],
    [
      {
        box_logs: [
          { box_log: good() },
          { box_log: good() },
          { box_log: good() },
          { box_log: { ...good(), type: 'IN' } },
        ],
      },
      'box_logs[3].box_log.type',
    ],
    [{ box_logs: [{ box_log: { ...good(), created_at: '2026-01-01T00:00:00Z' } }] }, 'box_logs[0].box_log.created_at'],
    [{ box_logs: [{ box_log: { ...good(), created_at: '2026-02-30 00:00:00' } }] }, 'box_logs[0].box_log.created_at'],
    [
      { box_logs: [{ box_log: { ...good(), point_attributes: { latitude: 91, longitude: 0 } } }] },
      'box_logs[0].box_log.point_attributes.latitude',
    ],
    [
      { box_logs: [{ box_log: { ...good(), point_attributes: { latitude: 0, longitude: '2' } } }] },
      'box_logs[0].box_log.point_attributes.longitude',
    ],
    [{ box_logs: [{ box_log: { ...good(), point_attributes: [] } }] }, 'box_logs[0].box_log.point_attributes'],
    [{ box_logs: [{ box_log: { ...good(), command: 'not base64!' } }] }, 'box_logs[0].box_log.command'],
    [{ box_logs: [{ box_log: { ...good(), response: 'AAA' } }] }, 'box_logs[0].box_log.response'],
    [{ box_logs: [{ box_log: { ...good(), response_decrypted: 5 } }] }, 'box_logs[0].box_log.response_decrypted'],
    [{ box_logs: [{ box_log: { ...good(), offline: 'false' } }] }, 'box_logs[0].box_log.offline'],
    [{ box_logs: [{ box_log: { ...good(), equipment_id: 2 ** 32 } }] }, 'box_logs[0].box_log.equipment_id'],
    [{ box_logs: [{ box_log: { ...good(), fo_user_id: '1' } }] }, 'box_logs[0].box_log.fo_user_id'],
    [{ box_logs: [{ box_log: { ...good(), fo_user_id: null } }] }, 'box_logs[0].box_log.fo_user_id'],
    [{ box_logs: [{ box_log: { ...good(), smart_key_id: 1.5 } }] }, 'box_logs[0].box_log.smart_key_id'],
  ];
  for (const field of [
    'fo_user_id',
    'smart_key_id',
    'equipment_id',
    'secured_parking_id',
    'type',
    'offline',
    'created_at',
  ]) {
    const { [field]: _missing, ...log } = good();
    cases.push([{ box_logs: [{ box_log: log }] }, `box_logs[0].box_log.${field}`]);
  }
  for (const [body, path] of cases) {
    const response = await postBoxLogs(f.app, f.token, body);
    t.is(response.statusCode, 422, path);
    const error = errorBody(t, response);
    t.is(error.error, 'validation_failed');
    t.true(
      error.details.some((detail) => detail.path === path),
      `${path}: ${JSON.stringify(error.details)}`,
    );
  }
  t.is(await countRows(f.app, 'box_logs'), 0);
});

test('404 naming which id of which element does not exist', async (t) => {
  const f = await fixture(t);
  const log = (change: Record<string, unknown>) => ({ box_log: { ...accessLog(f, null).box_log, ...change } });
  for (const [change, path] of [
    [{ fo_user_id: 999 }, 'box_logs[1].box_log.fo_user_id'],
    [{ smart_key_id: 999 }, 'box_logs[1].box_log.smart_key_id'],
    [{ equipment_id: 999 }, 'box_logs[1].box_log.equipment_id'],
    [{ secured_parking_id: 999 }, 'box_logs[1].box_log.secured_parking_id'],
  ] as const) {
    const response = await postBoxLogs(f.app, f.token, { box_logs: [log({}), log(change)] });
    t.is(response.statusCode, 404, path);
    const error = errorBody(t, response);
    t.is(error.error, 'resource_not_found');
    t.true(
      error.details.some((detail) => detail.path === path),
      JSON.stringify(error.details),
    );
  }
  t.is(await countRows(f.app, 'box_logs'), 0, 'nothing of those batches was stored');
});

test("422 for a fo_user_id other than the token's user, and ids that do not fit together", async (t) => {
  const f = await fixture(t);
  await anotherDriver(f.app); // user 2 exists
  const other = await seedParking(f.app);
  const log = (change: Record<string, unknown>) => ({ box_log: { ...accessLog(f, null).box_log, ...change } });
  for (const [change, path] of [
    [{ fo_user_id: 2 }, 'box_logs[0].box_log.fo_user_id'],
    [{ equipment_id: other.entrance.moduleId }, 'box_logs[0].box_log.equipment_id'],
    [{ secured_parking_id: other.id, equipment_id: other.entrance.moduleId }, 'box_logs[0].box_log.smart_key_id'],
  ] as const) {
    const response = await postBoxLogs(f.app, f.token, { box_logs: [log(change)] });
    t.is(response.statusCode, 422, path);
    t.true(errorBody(t, response).details.some((detail) => detail.path === path));
  }
  t.is(await countRows(f.app, 'box_logs'), 0);
});

test("422 for a driver's upload naming an operator's smart key (it has no driver); its verified log moves no session", async (t) => {
  const f = await fixture(t);
  await addOperator(f.app.ctx.store, 'bench', f.app.clock.now());
  const operatorId = ((await one(f.app.ctx.store, 'SELECT id FROM operators')) as { id: number }).id;
  const access = await mintOperatorAccess(f.app.ctx.store, f.app.clock, f.parking.entrance.moduleId, {
    id: operatorId,
    name: 'bench',
  });
  const log = accessLog(f, boxAnswer(f.parking.entrance, access.command), f.parking.entrance, {
    smartKeyId: access.smartKeyId,
    command: access.command,
  });
  const response = await postBoxLogs(f.app, f.token, { box_logs: [log] });
  t.is(response.statusCode, 422);
  t.is(errorBody(t, response).details[0]?.path, 'box_logs[0].box_log.smart_key_id');
  t.is(await countRows(f.app, 'box_logs'), 0);
  // As the service stores it from MQTT (no driver): verified, and no session moved.
  const stored = await ingestThroughGroup(f.app.ctx, [{ ...(log.box_log as never as BoxLogInput), fo_user_id: null }], {
    source: 'mqtt',
  });
  t.true(stored[0]?.verified);
  t.is((await session(f))?.state, 'entering');
});

test('more than BOX_LOGS_MAX_BATCH elements: 422; a body over the size limit: 413', async (t) => {
  const f = await fixture(t, { boxLogsMaxBatch: 3, bodyLimitBytes: 4096 });
  const log = accessLog(f, null);
  t.is((await postBoxLogs(f.app, f.token, { box_logs: [log, log, log] })).statusCode, 201);
  const tooMany = await postBoxLogs(f.app, f.token, { box_logs: [log, log, log, log] });
  t.is(tooMany.statusCode, 422);
  t.regex(errorBody(t, tooMany).details[0]?.message ?? '', /at most 3/);
  const big = await postBoxLogs(f.app, f.token, { box_logs: [log], padding: 'x'.repeat(5000) });
  t.is(big.statusCode, 413);
  t.is(errorBody(t, big).error, 'body_too_large');
});

test('a batch with one bad element changes nothing', async (t) => {
  const f = await fixture(t);
  const good = accessLog(f, boxAnswer(f.parking.entrance, f.command));
  const bad = { box_log: { ...accessLog(f, null).box_log, type: 'nope' } };
  t.is((await postBoxLogs(f.app, f.token, { box_logs: [good, good, bad] })).statusCode, 422);
  t.is(await countRows(f.app, 'box_logs'), 0);
  t.is((await session(f))?.state, 'entering', 'the verified OK in the refused batch moved nothing');
  t.is((await f.app.ctx.boxes.learned(f.parking.entrance.moduleId))?.last_seen_at, null);
});

test('concurrent batches share one commit, yet each is all or nothing: a 404 batch stores nothing, its neighbours are stored', async (t) => {
  const f = await fixture(t);
  const groupsBefore = f.app.ctx.groupCommit.counters.groups;
  const ranAloneBefore = f.app.ctx.groupCommit.ranAlone;
  const missingParking = { box_log: { ...accessLog(f, null).box_log, secured_parking_id: 999_999 } };
  const [first, refused, last] = await Promise.all([
    postBoxLogs(f.app, f.token, { box_logs: [accessLog(f, boxAnswer(f.parking.entrance, f.command))] }),
    postBoxLogs(f.app, f.token, { box_logs: [accessLog(f, boxAnswer(f.parking.entrance, f.command)), missingParking] }),
    postBoxLogs(f.app, f.token, { box_logs: [accessLog(f, null), accessLog(f, null)] }),
  ]);
  t.is(first.statusCode, 201);
  t.is(refused.statusCode, 404);
  t.is(errorBody(t, refused).details[0]?.path, 'box_logs[1].box_log.secured_parking_id');
  t.is(last.statusCode, 201);
  t.is(await countRows(f.app, 'box_logs'), 3, 'one log of the first batch, two of the last, none of the refused one');
  // The three requests of one turn share a commit (api/box-logs/http-batches.ts),
  // and the refused one is answered without its neighbours running again.
  t.is(f.app.ctx.groupCommit.counters.groups - groupsBefore, 1, 'the requests of one turn: one transaction');
  t.is(f.app.ctx.groupCommit.ranAlone, ranAloneBefore, 'no batch ran again alone');
  t.is((await session(f))?.state, 'active', 'the verified OK of the first batch moved the session');
});

test("verified only with a good tag under the box of equipment_id, bound to the log's command", async (t) => {
  const f = await fixture(t);
  const genuine = boxAnswer(f.parking.entrance, f.command);
  const flipped = Buffer.from(genuine);
  flipped[30] = (flipped[30] ?? 0) ^ 1;
  const otherCommand = Buffer.from(f.command);
  otherCommand[12] = (otherCommand[12] ?? 0) ^ 1; // another nonce: the response does not answer it
  const logs = [
    accessLog(f, genuine),
    accessLog(f, flipped),
    accessLog(f, boxAnswer(f.parking.exit, f.command), f.parking.entrance), // the exit box's answer filed under the entrance box
    accessLog(f, boxAnswer(f.parking.entrance, otherCommand)),
    accessLog(f, Buffer.from('not a response frame')),
    accessLog(f, null),
  ];
  const body = (await postBoxLogs(f.app, f.token, { box_logs: logs })).json<BoxLogsBody>();
  t.deepEqual(
    body.box_logs.map((log) => log.verified),
    [true, false, false, false, false, false],
  );
});

for (const accessMode of ACCESS_MODES) {
  test(`unverified responses change nothing; a verified OK at the entrance makes the session active (${accessMode})`, async (t) => {
    const f = await fixture(t, {}, accessMode);
    t.is(f.command[1], f.parking.accessKind, 'the smart key carries the access kind of its parking');
    const forged = boxAnswer({ ...f.parking.entrance, boxKey: Buffer.alloc(16, 7) }, f.command);
    await postBoxLogs(f.app, f.token, { box_logs: [accessLog(f, forged)] });
    t.is((await session(f))?.state, 'entering');
    t.is((await session(f))?.entrance_remaining_tries, 10);
    await postBoxLogs(f.app, f.token, {
      box_logs: [accessLog(f, boxAnswer(f.parking.entrance, f.command, { remaining: 9 }))],
    });
    t.is((await session(f))?.state, 'active');
    t.is((await session(f))?.entrance_remaining_tries, 9);
  });
}

test('a forged pair sent first does not suppress the genuine log that follows; duplicates store nothing', async (t) => {
  const f = await fixture(t);
  const genuine = boxAnswer(f.parking.entrance, f.command, { boxSeq: 77 });
  const forged = boxAnswer({ ...f.parking.entrance, boxKey: Buffer.alloc(16, 9) }, f.command, { boxSeq: 77 });
  const first = (
    await postBoxLogs(f.app, f.token, { box_logs: [accessLog(f, forged), accessLog(f, forged)] })
  ).json<BoxLogsBody>();
  t.deepEqual(
    first.box_logs.map((log) => [log.verified, log.duplicate]),
    [
      [false, false],
      [false, false],
    ],
    'unverified logs never collide',
  );
  const second = (
    await postBoxLogs(f.app, f.token, { box_logs: [accessLog(f, genuine), accessLog(f, genuine)] })
  ).json<BoxLogsBody>();
  t.deepEqual(
    second.box_logs.map((log) => [log.verified, log.duplicate]),
    [
      [true, false],
      [true, true],
    ],
    'a duplicate within the batch',
  );
  t.is(second.box_logs[1]?.id, second.box_logs[0]?.id);
  const before = await countRows(f.app, 'box_logs');
  const third = (
    await postBoxLogs(f.app, f.token, { box_logs: [accessLog(f, genuine, f.parking.entrance, { offline: true })] })
  ).json<BoxLogsBody>();
  t.deepEqual(third.box_logs, [{ id: second.box_logs[0]?.id, verified: true, duplicate: true }]);
  t.is(await countRows(f.app, 'box_logs'), before, 'sending it again stores nothing');
  t.is((await session(f))?.state, 'active');
});

for (const accessMode of ACCESS_MODES) {
  test(`exit: a verified OK at the exit box ends the session (end_time, final amount); finished once paid (${accessMode})`, async (t) => {
    const f = await fixture(t, {}, accessMode);
    await postBoxLogs(f.app, f.token, { box_logs: [accessLog(f, boxAnswer(f.parking.entrance, f.command))] });
    f.app.clock.advance(30 * 60_000);
    const exitAt = '2026-01-01 00:25:00';
    await postBoxLogs(f.app, f.token, {
      box_logs: [
        accessLog(f, boxAnswer(f.parking.exit, f.command, { remaining: 9 }), f.parking.exit, { createdAt: exitAt }),
      ],
    });
    const ended = await session(f);
    t.is(ended?.state, 'exiting');
    t.is(ended?.end_time, Date.UTC(2026, 0, 1, 0, 25), 'when the barrier opened (created_at)');
    t.is(ended?.amount_minor, 250, '6.00 an hour for 25 minutes');
    t.is(ended?.exit_remaining_tries, 9);
    const payment = (await f.app.ctx.payments.listOfSession(f.sessionId))[0];
    const paid = await f.app.app.inject({
      method: 'POST',
      url: `/pay/${payment?.token ?? ''}`,
      payload: 'action=pay&card_number=4242424242424242&expiry=12%2F30',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    t.is(paid.statusCode, 200);
    t.is((await session(f))?.state, 'finished');
  });
}

for (const accessMode of ACCESS_MODES) {
  test(`exit after paying: straight to finished; an overstay at the exit adds a payment and waits for it (${accessMode})`, async (t) => {
    const f = await fixture(t, {}, accessMode);
    const payment = (await f.app.ctx.payments.listOfSession(f.sessionId))[0];
    await f.app.app.inject({
      method: 'POST',
      url: `/pay/${payment?.token ?? ''}`,
      payload: 'action=pay&card_number=4242424242424242&expiry=12%2F30',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    f.app.clock.advance(20 * 60_000);
    await postBoxLogs(f.app, f.token, {
      box_logs: [
        accessLog(f, boxAnswer(f.parking.exit, f.command), f.parking.exit, { createdAt: '2026-01-01 00:20:00' }),
      ],
    });
    t.is((await session(f))?.state, 'finished');

    const g = await fixture(t, {}, accessMode);
    g.app.clock.advance(90 * 60_000);
    await postBoxLogs(g.app, g.token, {
      box_logs: [
        accessLog(g, boxAnswer(g.parking.exit, g.command), g.parking.exit, { createdAt: '2026-01-01 01:30:00' }),
      ],
    });
    t.is((await session(g))?.state, 'exiting');
    t.deepEqual(
      (await g.app.ctx.payments.listOfSession(g.sessionId)).map((p) => [p.purpose, p.amount_minor]),
      [
        ['session', 600],
        ['overstay', 300],
      ],
    );
  });
}

for (const accessMode of ACCESS_MODES) {
  test(`tries countdown: each verified try lowers the direction's remaining tries, never raises it (${accessMode})`, async (t) => {
    const f = await fixture(t, {}, accessMode);
    const answer = (remaining: number, status: number = Status.OK, box = f.parking.entrance) =>
      accessLog(f, boxAnswer(box, f.command, { remaining, status: status as 0 }), box);
    await postBoxLogs(f.app, f.token, {
      box_logs: [answer(9), answer(8, Status.LOW_BATTERY), answer(7, Status.BARRIER_FAULT)],
    });
    t.is((await session(f))?.entrance_remaining_tries, 7);
    await postBoxLogs(f.app, f.token, { box_logs: [answer(9)] });
    t.is((await session(f))?.entrance_remaining_tries, 7, 'an old try uploaded late does not raise it');
    await postBoxLogs(f.app, f.token, {
      box_logs: [answer(0, Status.NO_TRIES_LEFT), answer(0xff, Status.AUTH_FAILED)],
    });
    t.is((await session(f))?.entrance_remaining_tries, 0);
    t.is((await session(f))?.exit_remaining_tries, 10, 'the other direction is untouched');
    await postBoxLogs(f.app, f.token, { box_logs: [answer(4, Status.OK, f.parking.exit)] });
    t.is((await session(f))?.exit_remaining_tries, 4);
  });
}

test('the service learns box_time drift, battery, last seen and the control sequence from verified responses', async (t) => {
  const f = await fixture(t);
  const box = f.parking.entrance;
  // Uploaded as it happens: a created_at near its receipt times the box's clock.
  f.app.clock.advance(10 * 60_000);
  const boxTime = Math.floor(Date.UTC(2026, 0, 1, 0, 10, 0) / 1000) + 42;
  await postBoxLogs(f.app, f.token, {
    box_logs: [
      accessLog(f, boxAnswer(box, f.command, { boxSeq: 500, boxTime, batteryMv: 3550 }), box, {
        createdAt: '2026-01-01 00:10:00',
      }),
    ],
  });
  t.like(await f.app.ctx.boxes.learned(box.moduleId), {
    last_seen_at: Date.UTC(2026, 0, 1, 0, 10),
    last_box_seq: 500,
    last_box_time: boxTime,
    box_time_drift_seconds: 42,
    battery_mv: 3550,
  });
  // An older response uploaded later does not overwrite what is newer.
  await postBoxLogs(f.app, f.token, {
    box_logs: [
      accessLog(f, boxAnswer(box, f.command, { boxSeq: 400, batteryMv: 3900 }), box, {
        createdAt: '2026-01-01 00:05:00',
      }),
    ],
  });
  t.is((await f.app.ctx.boxes.learned(box.moduleId))?.battery_mv, 3550);
  // A control command echoed by the box moves next_control_seq past it.
  const control = controlCommand(box, 41);
  const log = (response: Buffer) =>
    boxLog({
      foUserId: f.userId,
      smartKeyId: null,
      box,
      parkingId: f.parking.id,
      command: control,
      response,
      type: 'control',
    });
  await postBoxLogs(f.app, f.token, {
    box_logs: [log(boxAnswer(box, control, { direction: 0, remaining: 0xff, batteryMv: 3600 }))],
  });
  t.like(await f.app.ctx.boxes.learned(box.moduleId), { last_control_seq: 41, next_control_seq: 42 });
  await postBoxLogs(f.app, f.token, {
    box_logs: [log(boxAnswer(box, controlCommand(box, 99), { direction: 0, remaining: 0xff, status: Status.REPLAY }))],
  });
  t.like(
    await f.app.ctx.boxes.learned(box.moduleId),
    { last_control_seq: 41 },
    'a refused sequence is not the last accepted',
  );
  const forged = boxAnswer({ ...box, boxKey: Buffer.alloc(16) }, controlCommand(box, 5000), {
    direction: 0,
    remaining: 0xff,
  });
  await postBoxLogs(f.app, f.token, { box_logs: [log(forged)] });
  t.true(
    ((await f.app.ctx.boxes.learned(box.moduleId))?.next_control_seq ?? 0) < 5000,
    'an unverified response teaches nothing',
  );
});

test('the same path without HTTP, as MQTT ingestion calls it: null driver and key, same verification and dedupe', async (t) => {
  const f = await fixture(t);
  const box = f.parking.entrance;
  const control = controlCommand(box, 7);
  const entry = {
    ...(boxLog({
      foUserId: null,
      smartKeyId: null,
      box,
      parkingId: f.parking.id,
      command: control,
      response: boxAnswer(box, control, { direction: 0, remaining: 0xff }),
      type: 'control',
    }).box_log as never as BoxLogInput),
  };
  const [first] = await ingestThroughGroup(f.app.ctx, [entry], { source: 'mqtt' });
  t.like(first, { verified: true, duplicate: false });
  t.like(await one(f.app.ctx.store, 'SELECT * FROM box_logs WHERE id = ?', first?.id ?? 0), {
    source: 'mqtt',
    fo_user_id: null,
    smart_key_id: null,
    verified: 1,
  });
  t.deepEqual(await ingestThroughGroup(f.app.ctx, [entry], { source: 'mqtt' }), [
    { id: first?.id ?? 0, verified: true, duplicate: true },
  ]);
  t.is((await f.app.ctx.boxes.learned(box.moduleId))?.next_control_seq, 8);
  // A session key's response arriving over MQTT moves the session as over HTTP.
  const access = { ...(accessLog(f, boxAnswer(box, f.command)).box_log as never as BoxLogInput), fo_user_id: null };
  await ingestThroughGroup(f.app.ctx, [access], { source: 'mqtt' });
  t.is((await session(f))?.state, 'active');
  // Unknown ids are refused before anything is written, naming them.
  const error = await t.throwsAsync(
    ingestThroughGroup(f.app.ctx, [{ ...entry, equipment_id: 4242 }], { source: 'mqtt' }),
  );
  t.regex(JSON.stringify((error as unknown as { details: unknown }).details), /equipment_id/);
});
