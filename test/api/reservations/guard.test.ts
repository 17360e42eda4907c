// A reserved box on the real API (embedded broker, dispatcher, ingestion)
// with a real simulated box on MQTT, on a fake clock: the routes that drive
// the box refuse another operator (409 box_reserved) and let the holder with
// the token through; the service's own REVOKE waits for the release.
import test from 'ava';
import { addOperator } from '../../../api/operators/accounts.js';
import { errorBody, loggedIn } from '../../helpers/api-app.js';
import { addParking, controlApp, dispatcherAtRest, pumpUntil, startBox } from '../../helpers/control-bench.js';
import { sendCommand, setSim, untilSubscribed } from '../../helpers/operator-box.js';
import { createSession } from '../../helpers/parking.js';
import { reserve, release, type ReservationBody } from './reserve.js';

const RESERVATION = 'parkbench-reservation';

test('while ci holds the box: ada gets 409 box_reserved on commands, sim and conformance; ci with the token gets through, without it is refused too', async (t) => {
  const app = await controlApp(t);
  const ci = await addOperator(app.ctx.store, 'ci', app.clock.now());
  const ada = await addOperator(app.ctx.store, 'ada', app.clock.now());
  const [moduleId = 0] = (await addParking(app, { boxes: ['entrance'] })).moduleIds;
  const { box } = await startBox(t, app, moduleId);
  await untilSubscribed(app, ci.token, moduleId, box);
  const held = (await reserve(app, ci.token, moduleId, { ttl_seconds: 600, note: 'CI job 9' })).json<ReservationBody>();

  const post = (token: string, path: string, payload: unknown, reservation?: string) =>
    app.app.inject({
      method: 'POST',
      url: `/api/operator/boxes/${moduleId}/${path}`,
      headers: {
        authorization: `Bearer ${token}`,
        ...(reservation === undefined ? {} : { [RESERVATION]: reservation }),
      },
      payload: payload as string,
    });
  const guarded: [string, unknown][] = [
    ['commands', { command: 'status' }],
    ['commands', { command: 'access' }],
    ['commands', { command: 'battery_query' }],
    ['commands', { command: 'time_set' }],
    ['sim', { jam: true }],
    ['conformance', { skip_wearing: true }],
  ];
  for (const [path, payload] of guarded) {
    for (const [token, reservation] of [
      [ada.token, undefined],
      [ada.token, held.token],
      [ci.token, undefined],
      [ci.token, 'not-a-token'],
    ] as const) {
      const refused = await post(token, path, payload, reservation);
      t.is(refused.statusCode, 409, `${path} ${JSON.stringify(payload)}: ${refused.body}`);
      t.like(refused.json<Record<string, unknown>>(), {
        error: 'box_reserved',
        holder: 'ci',
        note: 'CI job 9',
        expires_at: held.expires_at,
      });
      t.is(errorBody(t, refused).details[0]?.path, 'module_id');
    }
  }
  const received = box.counters.commandsReceived;
  const status = await post(ci.token, 'commands', { command: 'status' }, held.token);
  t.is(status.statusCode, 200, status.body);
  t.like(status.json(), { verified: true, status: 'OK' });
  t.is(box.counters.commandsReceived, received + 1);
  const sim = await post(ci.token, 'sim', { battery_mv: 3700 }, held.token);
  t.is(sim.statusCode, 202, sim.body);
  // A driver's routes are never refused: a session on the reserved box's parking opens as ever.
  const driver = await loggedIn(app);
  const parkingId = (await app.ctx.boxes.findByModuleId(moduleId))?.parking_id ?? 0;
  const session = await createSession(app, driver.access_token, { parking_session: { secured_parking_id: parkingId } });
  t.is(session.statusCode, 201, session.body);

  t.is((await release(app, ci.token, moduleId, held.token)).statusCode, 204);
  t.is((await sendCommand(app, ada.token, moduleId, { command: 'status' })).statusCode, 200);
  t.is((await setSim(app, ada.token, moduleId, { battery_mv: 3900 })).statusCode, 202);

  // A conformance run with the token starts (202), and holds the box itself; cancelled here.
  const again = (await reserve(app, ci.token, moduleId, { ttl_seconds: 600 })).json<ReservationBody>();
  const run = await post(ci.token, 'conformance', { skip_wearing: true }, again.token);
  t.is(run.statusCode, 202, run.body);
  const runId = run.json<{ run: { id: string } }>().run.id;
  const cancelled = await app.app.inject({
    method: 'POST',
    url: `/api/operator/boxes/${moduleId}/conformance/${runId}/cancel`,
    headers: { authorization: `Bearer ${ci.token}` },
  });
  t.is(cancelled.statusCode, 202, cancelled.body);
  await dispatcherAtRest(app);
});

test('a REVOKE issued while the box is reserved reaches the simulated box only after the release; the control command view says why it waits', async (t) => {
  const app = await controlApp(t);
  const ci = await addOperator(app.ctx.store, 'ci', app.clock.now());
  const ops = await addOperator(app.ctx.store, 'ops', app.clock.now());
  const parking = await addParking(app, { boxes: ['entrance'] });
  const [moduleId = 0] = parking.moduleIds;
  const { box } = await startBox(t, app, moduleId);
  await untilSubscribed(app, ci.token, moduleId, box);
  const driver = await loggedIn(app);
  const session = await createSession(app, driver.access_token, {
    parking_session: { secured_parking_id: parking.id },
  });
  const keyId = session.json<{ smart_key: { id: number } }>().smart_key.id;

  const held = (await reserve(app, ci.token, moduleId, { ttl_seconds: 3_600, note: 'soak' })).json<ReservationBody>();
  const revoked = await app.app.inject({
    method: 'POST',
    url: `/api/operator/smart_keys/${keyId}/revoke`,
    headers: { authorization: `Bearer ${ops.token}` },
  });
  t.is(revoked.statusCode, 200, revoked.body);
  // Polls, kicks and the box online: nothing goes out while it is held.
  for (let step = 0; step < 10; step++) {
    app.clock.advance(1_000);
    await dispatcherAtRest(app);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.is(box.state.revocations.size, 0);
  const listed = await app.app.inject({
    method: 'GET',
    url: `/api/operator/control_commands?box=${moduleId}`,
    headers: { authorization: `Bearer ${ops.token}` },
  });
  const [command] = listed.json<{ state: string; waiting: { reason: string; until: string } | null }[]>();
  t.is(command?.state, 'pending');
  t.is(command?.waiting?.until, new Date(Date.parse(held.expires_at)).toISOString());
  t.regex(command?.waiting?.reason ?? '', /reserved by ci \(soak\) until .*: sent after its release/);

  // The holder's own command goes out at once, with the token.
  const status = await app.app.inject({
    method: 'POST',
    url: `/api/operator/boxes/${moduleId}/commands`,
    headers: { authorization: `Bearer ${ci.token}`, [RESERVATION]: held.token },
    payload: { command: 'status' },
  });
  t.is(status.statusCode, 200, status.body);
  t.is(box.state.revocations.size, 0);

  t.is((await release(app, ci.token, moduleId, held.token)).statusCode, 204);
  await pumpUntil(app, () => box.state.revocations.size === 1, 'the REVOKE reached the box', { stepMs: 100 });
  await pumpUntil(
    app,
    async () =>
      (
        await app.app.inject({
          method: 'GET',
          url: `/api/operator/control_commands?box=${moduleId}`,
          headers: { authorization: `Bearer ${ops.token}` },
        })
      ).json<{ state: string }[]>()[0]?.state === 'done',
    'the REVOKE done',
    { stepMs: 100 },
  );
});
