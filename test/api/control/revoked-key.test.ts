// A revoked smart key in the service: its open route refuses it
// (403 smart_key_revoked), GET shows revoked_at, and its verified box logs
// are stored but move its session no more. A REVOKE is queued per box of its
// module list, once, however often the operator runs the command.
import test, { type ExecutionContext } from 'ava';
import { revokeSmartKey } from '../../../api/control/operations.js';
import { boxAnswer, boxLog, postBoxLogs } from '../../helpers/box-logs.js';
import { errorBody, loggedIn, me, testApp } from '../../helpers/api-app.js';
import { authGet, createSession, seedParking } from '../../helpers/parking.js';
import { column, value } from '../../helpers/sql.js';

async function keyOfNewSession(t: ExecutionContext, online: boolean) {
  const app = await testApp(t);
  const parking = await seedParking(app, { isOnline: online });
  const token = (await loggedIn(app)).access_token;
  const created = await createSession(app, token, { parking_session: { secured_parking_id: parking.id } });
  const body = created.json<{ parking_session: { id: number }; smart_key: { id: number; access_command: string } }>();
  return { app, parking, token, key: body.smart_key, sessionId: body.parking_session.id };
}

test('a revoked key: open answers 403 smart_key_revoked, GET shows revoked_at, a REVOKE is queued for each of its boxes once', async (t) => {
  const { app, parking, token, key } = await keyOfNewSession(t, true);
  const before = await authGet(app, token, '/api/car_driver/smart_keys');
  t.is(before.json<{ revoked_at: string | null }[]>()[0]?.revoked_at, null);

  const result = await revokeSmartKey(app.ctx, key.id, app.clock.now(), 'test');
  t.true(result.newly_revoked);
  t.deepEqual(
    result.deliveries.map((delivery) => [delivery.module_id, delivery.kind, delivery.state]),
    parking.boxes.map((box) => [box.moduleId, 'REVOKE', 'pending']),
  );
  const endTime = (await app.ctx.smartKeys.findById(key.id))?.end_time ?? 0;
  const bodies = await column<string>(app.ctx.store, 'SELECT body FROM control_commands ORDER BY id');
  t.deepEqual(
    bodies.map((body) => JSON.parse(body) as unknown),
    parking.boxes.map(() => ({
      entries: [{ key_id: key.id, until: Math.floor(endTime / 1000) }],
    })),
  );

  const open = await app.app.inject({
    method: 'POST',
    url: `/api/car_driver/smart_keys/${key.id}/open`,
    headers: { authorization: `Bearer ${token}` },
    payload: { module_id: parking.entrance.moduleId },
  });
  t.is(open.statusCode, 403, open.body);
  t.is(errorBody(t, open).error, 'smart_key_revoked');

  const after = await authGet(app, token, '/api/car_driver/smart_keys');
  t.is(after.json<{ revoked_at: string | null }[]>()[0]?.revoked_at, '2026-01-01T00:00:00.000+00:00');

  const again = await revokeSmartKey(app.ctx, key.id, app.clock.now() + 5_000, 'test');
  t.false(again.newly_revoked);
  t.is(again.revoked_at, app.clock.now(), 'the first revocation time stays');
  t.is(again.deliveries.length, parking.boxes.length, 'nothing queued twice');
});

test('a verified OK of a revoked key at the entrance is stored but the session stays entering', async (t) => {
  const { app, parking, token, key, sessionId } = await keyOfNewSession(t, false);
  await revokeSmartKey(app.ctx, key.id, app.clock.now(), 'test');
  const command = Buffer.from(key.access_command, 'base64');
  const userId = (await me(app, `Bearer ${token}`)).json<{ id: number }>().id;
  const posted = await postBoxLogs(app, token, {
    box_logs: [
      boxLog({
        foUserId: userId,
        smartKeyId: key.id,
        box: parking.entrance,
        parkingId: parking.id,
        command,
        response: boxAnswer(parking.entrance, command),
      }),
    ],
  });
  t.is(posted.statusCode, 201, posted.body);
  t.like(posted.json<{ box_logs: { verified: boolean }[] }>().box_logs[0], { verified: true });
  t.is((await app.ctx.sessions.findById(sessionId))?.state, 'entering');
});

test('revoking an unknown key is refused in one line and changes nothing', async (t) => {
  const { app } = await keyOfNewSession(t, false);
  await t.throwsAsync(() => revokeSmartKey(app.ctx, 999, app.clock.now(), 'test'), {
    message: 'no smart key with id 999',
  });
  t.is(await value(app.ctx.store, 'SELECT count(*) FROM control_commands'), 0);
});
