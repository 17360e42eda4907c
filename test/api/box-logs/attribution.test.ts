// Whose a verified exchange is, and which of its times the service believes
// (docs/protocol.md, What an answer proves): an exchange whose answer
// authenticates its smart key is that key's driver's, whoever uploads it
// first; created_at is its uploader's word, bounded by when the service
// received it, and times the box's clock only when it is recent.
import test from 'ava';
import { loggedIn, testApp, type TestApp } from '../../helpers/api-app.js';
import { boxAnswer, boxLog, postBoxLogs, type BoxLogsBody } from '../../helpers/box-logs.js';
import { anotherDriver, createSession, seedParking, type SeededParking } from '../../helpers/parking.js';
import { one } from '../../helpers/sql.js';

interface Driver {
  token: string;
  userId: number;
  sessionId: number;
  keyId: number;
  command: Buffer;
}

async function sessionOf(app: TestApp, token: string, parking: SeededParking): Promise<Driver> {
  const created = await createSession(app, token, { parking_session: { secured_parking_id: parking.id } });
  const body = created.json<{ parking_session: { id: number }; smart_key: { id: number; access_command: string } }>();
  const key = await app.ctx.smartKeys.findById(body.smart_key.id);
  return {
    token,
    userId: key?.user_id ?? 0,
    sessionId: body.parking_session.id,
    keyId: body.smart_key.id,
    command: Buffer.from(body.smart_key.access_command, 'base64'),
  };
}

async function world(t: Parameters<typeof testApp>[0]) {
  const app = await testApp(t, { tokenTtlSeconds: 86_400 });
  const parking = await seedParking(app, { tries: 10 });
  const ada = await sessionOf(app, (await loggedIn(app)).access_token, parking);
  const bob = await sessionOf(app, (await anotherDriver(app)).accessToken, parking);
  return { app, parking, ada, bob };
}

/** `uploader` posts the exchange of `command` as its own, naming no smart key. */
async function upload(
  app: TestApp,
  parking: SeededParking,
  uploader: Driver,
  command: Buffer,
  response: Buffer,
  fields: { createdAt?: string; offline?: boolean; smartKeyId?: number | null } = {},
) {
  const posted = await postBoxLogs(app, uploader.token, {
    box_logs: [
      boxLog({
        foUserId: uploader.userId,
        smartKeyId: fields.smartKeyId ?? null,
        box: parking.entrance,
        parkingId: parking.id,
        command,
        response,
        ...(fields.createdAt === undefined ? {} : { createdAt: fields.createdAt }),
        ...(fields.offline === undefined ? {} : { offline: fields.offline }),
      }),
    ],
  });
  if (posted.statusCode !== 201) throw new Error(posted.body);
  const [result] = posted.json<BoxLogsBody>().box_logs;
  if (result === undefined) throw new Error('no result');
  return result;
}

test("driver B uploading driver A's exchange first: the log is A's (A's key and driver), A's session moves, and A's own upload is its duplicate", async (t) => {
  const { app, parking, ada, bob } = await world(t);
  const answer = boxAnswer(parking.entrance, ada.command);
  const first = await upload(app, parking, bob, ada.command, answer);
  t.like(first, { verified: true, duplicate: false });
  t.like(await one(app.ctx.store, 'SELECT fo_user_id, smart_key_id FROM box_logs WHERE id = ?', first.id), {
    fo_user_id: ada.userId,
    smart_key_id: ada.keyId,
  });
  t.is((await app.ctx.sessions.findById(ada.sessionId))?.state, 'active');
  t.is((await app.ctx.sessions.findById(bob.sessionId))?.state, 'entering');
  const again = await upload(app, parking, ada, ada.command, answer, { smartKeyId: ada.keyId });
  t.deepEqual(again, { id: first.id, verified: true, duplicate: true });
});

test("B naming his own key over A's exchange: the exchange's key wins", async (t) => {
  const { app, parking, ada, bob } = await world(t);
  const stored = await upload(app, parking, bob, ada.command, boxAnswer(parking.entrance, ada.command), {
    smartKeyId: bob.keyId,
  });
  t.like(await one(app.ctx.store, 'SELECT fo_user_id, smart_key_id FROM box_logs WHERE id = ?', stored.id), {
    fo_user_id: ada.userId,
    smart_key_id: ada.keyId,
  });
  t.is((await app.ctx.sessions.findById(bob.sessionId))?.state, 'entering', "B's session does not move");
});

test("an unverified upload stays its uploader's: nothing authenticates another key", async (t) => {
  const { app, parking, ada, bob } = await world(t);
  const stored = await upload(app, parking, bob, ada.command, Buffer.alloc(32, 1));
  t.like(stored, { verified: false });
  t.like(await one(app.ctx.store, 'SELECT fo_user_id, smart_key_id FROM box_logs WHERE id = ?', stored.id), {
    fo_user_id: bob.userId,
    smart_key_id: null,
  });
});

test('a genuine answer uploaded with created_at 9999-12-31: last seen when the service received it, and the drift untouched', async (t) => {
  const { app, parking, ada } = await world(t);
  const receivedAt = app.clock.now();
  const boxTime = Math.floor(receivedAt / 1000) + 3;
  await upload(app, parking, ada, ada.command, boxAnswer(parking.entrance, ada.command, { boxTime, boxSeq: 5_001 }), {
    createdAt: '2026-01-01 00:00:00',
  });
  t.like(await app.ctx.boxes.learned(parking.entrance.moduleId), {
    last_seen_at: receivedAt,
    box_time_drift_seconds: 3,
  });
  await upload(
    app,
    parking,
    ada,
    ada.command,
    boxAnswer(parking.entrance, ada.command, { boxTime: boxTime + 1, boxSeq: 5_002 }),
    { createdAt: '9999-12-31 23:59:59' },
  );
  t.like(await app.ctx.boxes.learned(parking.entrance.moduleId), {
    last_seen_at: receivedAt,
    last_box_seq: 5_002,
    box_time_drift_seconds: 3,
  });
});

test("an offline try uploaded two hours later tells the box's battery and box_seq, not its clock", async (t) => {
  const { app, parking, ada } = await world(t);
  const receivedAt = app.clock.now();
  const nowSeconds = Math.floor(receivedAt / 1000);
  await upload(
    app,
    parking,
    ada,
    ada.command,
    boxAnswer(parking.entrance, ada.command, { boxTime: nowSeconds - 2, boxSeq: 6_001 }),
  );
  t.like(await app.ctx.boxes.learned(parking.entrance.moduleId), { box_time_drift_seconds: -2 });
  const twoHoursAgo = new Date(receivedAt - 2 * 3_600_000).toISOString().slice(0, 19).replace('T', ' ');
  await upload(
    app,
    parking,
    ada,
    ada.command,
    boxAnswer(parking.entrance, ada.command, { boxTime: nowSeconds + 500, boxSeq: 6_002, batteryMv: 3_456 }),
    { createdAt: twoHoursAgo, offline: true },
  );
  t.like(await app.ctx.boxes.learned(parking.entrance.moduleId), {
    last_box_seq: 6_002,
    battery_mv: 3_456,
    last_seen_at: receivedAt - 2 * 3_600_000,
    box_time_drift_seconds: -2,
  });
});
