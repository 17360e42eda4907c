// Box responses over MQTT become box logs: a simulated box on the embedded
// broker answers a session's access command and the session moves, as if the
// phone had uploaded the log.
import test, { type ExecutionContext } from 'ava';
import mqtt from 'mqtt';
import { Topics } from '../../../lib/mqtt-topics.js';
import { FrameKind, parseResponse, sealCommand, signAccessCommand, Status } from '../../../firmware-protocol/index.js';
import { hashMqttPassword } from '../../../api/auth/mqtt-password.js';
import { MqttAccountRepository } from '../../../api/mqtt/accounts.js';
import { SimulatedBox } from '../../../simulator/simulated-box.js';
import { BoxMqttLink } from '../../../simulator/links/mqtt-link.js';
import { errorBody, loggedIn, testApp, type TestApp, databaseArgument } from '../../helpers/api-app.js';
import type { AccessMode } from '../../../api/parkings/repository.js';
import {
  ACCESS_MODES,
  authGet,
  createSession,
  provisioningOf,
  seedParking,
  type SeededBox,
  type SeededParking,
} from '../../helpers/parking.js';
import { runCli } from '../../helpers/run-cli.js';
import { newIssuer } from '../../helpers/signed-box.js';
import { waitFor } from '../../helpers/wait.js';
import { all, run } from '../../helpers/sql.js';

const topics = new Topics();

interface Bench {
  app: TestApp;
  parking: SeededParking;
  token: string;
  url: string;
}

async function bench(t: ExecutionContext, online = false, accessMode: AccessMode = 'sealed'): Promise<Bench> {
  const app = await testApp(t, {}, { mqtt: { mode: 'embedded', host: '127.0.0.1', port: 0 } });
  const parking = await seedParking(app, { isOnline: online, accessMode });
  for (const box of parking.boxes)
    await app.ctx.boxes.setMqttPasswordHash(box.moduleId, hashMqttPassword(`pw-${box.moduleId}`));
  const tokens = await loggedIn(app);
  const url = app.mqtt?.url ?? '';
  return { app, parking, token: tokens.access_token, url };
}

async function boxOnBroker(t: ExecutionContext, context: Bench, box: SeededBox): Promise<SimulatedBox> {
  const simulated = await SimulatedBox.start({
    clock: context.app.clock,
    // As `admin box provision` gives it: K_park (sealed) or the issuer public key (signed).
    provisioning: provisioningOf(context.parking, box),
  });
  const link = new BoxMqttLink(simulated, {
    url: context.url,
    username: `box-${box.moduleId}`,
    password: `pw-${box.moduleId}`,
    clock: context.app.clock,
  });
  t.teardown(async () => {
    await link.stop();
    await simulated.stop();
  });
  await link.start();
  return simulated;
}

async function operator(t: ExecutionContext, context: Bench): Promise<mqtt.MqttClient> {
  await new MqttAccountRepository(context.app.ctx.store).addClient(
    { name: 'tester', role: 'operator', username: 'op-tester', password_hash: hashMqttPassword('op-pw') },
    Date.now(),
  );
  const client = await mqtt.connectAsync(context.url, { username: 'op-tester', password: 'op-pw', reconnectPeriod: 0 });
  t.teardown(() => client.endAsync(true));
  return client;
}

interface StoredLog {
  id: number;
  verified: number;
  fo_user_id: number | null;
  smart_key_id: number | null;
  type: string;
  response: string | null;
  command_decrypted: string | null;
  response_decrypted: string | null;
}

async function logs(context: Bench): Promise<StoredLog[]> {
  return await all<StoredLog>(context.app.ctx.store, 'SELECT * FROM box_logs ORDER BY id');
}

for (const accessMode of ACCESS_MODES) {
  test(`a verified response over MQTT becomes a box log and moves the session to active (${accessMode})`, async (t) => {
    const context = await bench(t, false, accessMode);
    await boxOnBroker(t, context, context.parking.entrance);
    const created = await createSession(context.app, context.token, {
      parking_session: { secured_parking_id: context.parking.id },
    });
    const session = created.json<{
      smart_key: { id: number; access_command: string };
      parking_session: { id: number };
    }>();
    const client = await operator(t, context);
    // As the phone's stand-in would: the access command on the box's command topic, no context.
    await client.publishAsync(
      topics.box(context.parking.entrance.moduleId, 'command'),
      JSON.stringify({ command: session.smart_key.access_command }),
      { qos: 1 },
    );
    await waitFor(async () => (await logs(context)).length === 1, 'the box log');
    const [log] = await logs(context);
    t.like(log, { verified: 1, smart_key_id: session.smart_key.id, type: 'in' });
    t.truthy(log?.fo_user_id, 'the driver comes from the smart key of the command');
    // Rendered with the parking's keys: K_park opens an ACCESS, the issuer public key verifies an ACCESS_SIGNED.
    const kind = accessMode === 'signed' ? 'ACCESS_SIGNED' : 'ACCESS';
    t.regex(
      log?.command_decrypted ?? '',
      new RegExp(
        `^${kind} key=${session.smart_key.id} parking=${context.parking.id} modules=${context.parking.entrance.moduleId},${context.parking.exit.moduleId} valid=\\S+Z\\.\\.\\S+Z entries=10 exits=10$`,
      ),
    );
    t.regex(log?.response_decrypted ?? '', new RegExp(`^OK ${kind} module=`));
    const current = await authGet(context.app, context.token, '/api/car_driver/parking_sessions/current');
    t.is(
      current.json<{ parking_session: { state: string; entrance_remaining_tries: number } }>().parking_session.state,
      'active',
    );
    t.is(context.app.mqtt?.ingestion.counters.stored, 1);

    // What the box told the service, for the operator.
    const status = await runCli([
      'admin',
      'box',
      'status',
      '--module-id',
      String(context.parking.entrance.moduleId),
      '--json',
      '--database',
      databaseArgument(context.app),
    ]);
    t.is(status.code, 0, status.stderr);
    const [box] = JSON.parse(status.stdout) as {
      last_seen_at: string | null;
      battery_mv: number | null;
      last_box_seq: number | null;
      next_control_seq: number;
    }[];
    t.truthy(box?.last_seen_at);
    t.is(box?.battery_mv, 3_900);
    t.is(box?.last_box_seq, 1);
    const unknown = await runCli([
      'admin',
      'box',
      'status',
      '--module-id',
      '4000000',
      '--database',
      databaseArgument(context.app),
    ]);
    t.is(unknown.code, 1);
  });
}

test('messages that cannot become a log are counted and acknowledged; a redelivered response is stored once', async (t) => {
  const context = await bench(t);
  const gatewayAccounts = new MqttAccountRepository(context.app.ctx.store);
  await gatewayAccounts.addClient(
    { name: 'bench', role: 'gateway', username: 'gw-bench', password_hash: hashMqttPassword('gw-pw') },
    Date.now(),
  );
  const gateway = await mqtt.connectAsync(context.url, { username: 'gw-bench', password: 'gw-pw', reconnectPeriod: 0 });
  t.teardown(() => gateway.endAsync(true));
  const moduleId = context.parking.entrance.moduleId;
  await gateway.publishAsync(topics.box(moduleId, 'response'), 'not json', { qos: 1 });
  await gateway.publishAsync(topics.box(moduleId, 'response'), JSON.stringify({ response: null }), { qos: 1 });
  await gateway.publishAsync(topics.box(4_000_000, 'response'), JSON.stringify({ command: 'AQE=', response: null }), {
    qos: 1,
  });
  const counters = context.app.mqtt?.ingestion.counters;
  t.like(counters?.refused, { not_json: 1, no_command: 1, unknown_box: 1 });

  // A timeout record: stored unverified with a null response.
  const command = sealCommand({
    kind: FrameKind.BATTERY_QUERY,
    key: context.parking.entrance.boxKey,
    keyId: 77,
    scope: moduleId,
    body: {},
  });
  await gateway.publishAsync(
    topics.box(moduleId, 'response'),
    JSON.stringify({
      command: command.toString('base64'),
      response: null,
      received_at: new Date().toISOString(),
      via: 'serial',
      context: {},
      error: 'timeout',
    }),
    { qos: 1 },
  );
  t.like((await logs(context)).at(-1), {
    verified: 0,
    response: null,
    type: 'control',
    smart_key_id: null,
    fo_user_id: null,
  });

  // A real answer, published twice (a redelivery): one log.
  const box = await boxOnBroker(t, context, context.parking.entrance);
  const response = (await box.handleCommand(command)) ?? Buffer.alloc(0);
  t.is(parseResponse(response).status, Status.OK);
  const message = JSON.stringify({
    command: command.toString('base64'),
    response: response.toString('base64'),
    received_at: new Date().toISOString(),
    via: 'serial',
    context: {},
  });
  await gateway.publishAsync(topics.box(moduleId, 'response'), message, { qos: 1 });
  await gateway.publishAsync(topics.box(moduleId, 'response'), message, { qos: 1 });
  t.is((await logs(context)).filter((log) => log.verified === 1).length, 1);
  t.is(counters?.duplicates, 1);
});

for (const accessMode of ACCESS_MODES) {
  test(`POST /api/car_driver/smart_keys/:id/open reaches the box of an online parking through MQTT (${accessMode})`, async (t) => {
    const context = await bench(t, true, accessMode);
    await boxOnBroker(t, context, context.parking.entrance);
    const session = (
      await createSession(context.app, context.token, { parking_session: { secured_parking_id: context.parking.id } })
    ).json<{ smart_key: { id: number } }>();
    const open = (moduleId: number, key = session.smart_key.id, token = context.token) =>
      context.app.app.inject({
        method: 'POST',
        url: `/api/car_driver/smart_keys/${key}/open`,
        headers: { authorization: `Bearer ${token}` },
        payload: { module_id: moduleId },
      });
    const opened = await open(context.parking.entrance.moduleId);
    t.is(opened.statusCode, 200, opened.body);
    t.like(opened.json(), {
      module_id: context.parking.entrance.moduleId,
      status: 'OK',
      status_code: 0,
      verified: true,
    });
    t.is((await logs(context)).length, 1);
    t.is(errorBody(t, await open(123_456)).error, 'validation_failed');
    t.is((await open(context.parking.entrance.moduleId, 999_999)).statusCode, 404);
    // The exit box is not connected: 504 once BOX_ANSWER_TIMEOUT_MS has passed on the clock.
    const timersBefore = context.app.clock.pendingTimers;
    const waiting = open(context.parking.exit.moduleId);
    await waitFor(() => context.app.clock.pendingTimers > timersBefore, 'the command published, its timeout set');
    await context.app.clock.advanceAsync(context.app.config.boxAnswerTimeoutMs, 500);
    const timedOut = await waiting;
    t.is(timedOut.statusCode, 504);
    t.is(errorBody(t, timedOut).error, 'box_timeout');
  });
}

test('command_decrypted of an ACCESS_SIGNED: in full under any issuer public key of the parking (current, previous, being installed), AUTH_FAILED under another', async (t) => {
  const context = await bench(t, false, 'signed');
  const { issuer } = context.parking;
  if (issuer === null) return t.fail('a signed parking has an issuer');
  const [previous, next, stranger] = [newIssuer(), newIssuer(), newIssuer()];
  await run(
    context.app.ctx.store,
    'UPDATE secured_parkings SET issuer_previous_public_key = ?, issuer_next_private_key = ?, issuer_next_public_key = ? WHERE id = ?',
    previous.publicKey.toString('hex'),
    next.privateKey.toString('hex'),
    next.publicKey.toString('hex'),
    context.parking.id,
  );
  await new MqttAccountRepository(context.app.ctx.store).addClient(
    { name: 'bench', role: 'gateway', username: 'gw-bench', password_hash: hashMqttPassword('gw-pw') },
    Date.now(),
  );
  const gateway = await mqtt.connectAsync(context.url, { username: 'gw-bench', password: 'gw-pw', reconnectPeriod: 0 });
  t.teardown(() => gateway.endAsync(true));
  const moduleId = context.parking.entrance.moduleId;
  const body = { notBefore: 1_780_000_000, notAfter: 1_780_003_600, maxEntries: 2, maxExits: 3, moduleIds: [moduleId] };
  for (const [pair, expected] of [
    [
      issuer,
      `ACCESS_SIGNED key=4242 parking=${context.parking.id} modules=${moduleId} valid=2026-05-28T20:26:40Z..2026-05-28T21:26:40Z entries=2 exits=3`,
    ],
    [
      previous,
      `ACCESS_SIGNED key=4242 parking=${context.parking.id} modules=${moduleId} valid=2026-05-28T20:26:40Z..2026-05-28T21:26:40Z entries=2 exits=3`,
    ],
    [
      next,
      `ACCESS_SIGNED key=4242 parking=${context.parking.id} modules=${moduleId} valid=2026-05-28T20:26:40Z..2026-05-28T21:26:40Z entries=2 exits=3`,
    ],
    [stranger, `ACCESS_SIGNED key=4242 parking=${context.parking.id} AUTH_FAILED`],
  ] as const) {
    const command = signAccessCommand({ privateKey: pair.privateKey, keyId: 4242, scope: context.parking.id, body });
    await gateway.publishAsync(
      topics.box(moduleId, 'response'),
      JSON.stringify({
        command: command.toString('base64'),
        response: null,
        received_at: new Date().toISOString(),
        via: 'serial',
        context: {},
        error: 'timeout',
      }),
      { qos: 1 },
    );
    t.is((await logs(context)).at(-1)?.command_decrypted, expected);
  }
  t.is((await logs(context)).length, 4);
});

test('a key of a parking that is not online: 422 parking_not_online', async (t) => {
  const context = await bench(t, false);
  const session = (
    await createSession(context.app, context.token, { parking_session: { secured_parking_id: context.parking.id } })
  ).json<{ smart_key: { id: number } }>();
  const response = await context.app.app.inject({
    method: 'POST',
    url: `/api/car_driver/smart_keys/${session.smart_key.id}/open`,
    headers: { authorization: `Bearer ${context.token}` },
    payload: { module_id: context.parking.entrance.moduleId },
  });
  t.is(response.statusCode, 422);
  t.is(errorBody(t, response).error, 'parking_not_online');
});

test('received_at off its format (years outside 0001..9999, no offset, not ISO 8601) is counted and dropped; an offset is stored as UTC', async (t) => {
  const context = await bench(t);
  await new MqttAccountRepository(context.app.ctx.store).addClient(
    { name: 'bench', role: 'gateway', username: 'gw-bench', password_hash: hashMqttPassword('gw-pw') },
    Date.now(),
  );
  const gateway = await mqtt.connectAsync(context.url, { username: 'gw-bench', password: 'gw-pw', reconnectPeriod: 0 });
  t.teardown(() => gateway.endAsync(true));
  const moduleId = context.parking.entrance.moduleId;
  const command = sealCommand({
    kind: FrameKind.BATTERY_QUERY,
    key: context.parking.entrance.boxKey,
    keyId: 78,
    scope: moduleId,
    body: {},
  }).toString('base64');
  const publish = (receivedAt: unknown) =>
    gateway.publishAsync(
      topics.box(moduleId, 'response'),
      JSON.stringify({
        command,
        response: null,
        received_at: receivedAt,
        via: 'serial',
        context: {},
        error: 'timeout',
      }),
      { qos: 1 },
    );
  const bad = [
    '+010000-01-01T00:00:00Z',
    '-000001-01-01T00:00:00Z',
    '0000-01-01T00:00:00Z',
    '0001-01-01T00:30:00+01:00',
    '2026-01-01T00:00:00',
    '2026-02-30T00:00:00Z',
    'Thu, 01 Jan 2026 00:00:00 GMT',
    '2026',
    1_767_225_600_000,
  ];
  for (const receivedAt of bad) await publish(receivedAt);
  const counters = context.app.mqtt?.ingestion.counters;
  t.is(counters?.refused.bad_received_at, bad.length);
  t.is((await logs(context)).length, 0);
  await publish('2026-01-01T01:30:00.250+02:00');
  await publish('0001-01-01T00:00:00Z');
  const stored = await all<{
    created_at: string;
  }>(context.app.ctx.store, 'SELECT created_at FROM box_logs ORDER BY id');
  t.deepEqual(
    stored.map((row) => row.created_at),
    ['2025-12-31 23:30:00', '0001-01-01 00:00:00'],
  );
});

test('a box topic whose module id is not canonical decimal (09101) is not box 9101: refused and counted', async (t) => {
  const context = await bench(t);
  await new MqttAccountRepository(context.app.ctx.store).addClient(
    { name: 'bench', role: 'gateway', username: 'gw-bench', password_hash: hashMqttPassword('gw-pw') },
    Date.now(),
  );
  const moduleId = context.parking.entrance.moduleId;
  const command = sealCommand({
    kind: FrameKind.BATTERY_QUERY,
    key: context.parking.entrance.boxKey,
    keyId: 79,
    scope: moduleId,
    body: {},
  }).toString('base64');
  const message = JSON.stringify({
    command,
    response: null,
    received_at: new Date().toISOString(),
    via: 'serial',
    context: {},
    error: 'timeout',
  });
  const ids = [`0${moduleId}`, `00000${moduleId}`];
  for (const [index, id] of ids.entries()) {
    // A refused publish closes the connection (MQTT 3.1.1 has no refusal code): one each.
    const gateway = await mqtt.connectAsync(context.url, {
      username: 'gw-bench',
      password: 'gw-pw',
      reconnectPeriod: 0,
    });
    t.teardown(() => gateway.endAsync(true));
    gateway.publish(`parkbench/boxes/${id}/response`, message, { qos: 0 });
    await waitFor(
      () => (context.app.mqtt?.brokerCounters?.refusedPublishes ?? 0) >= index + 1,
      `the publish on ${id} refused`,
    );
  }
  t.is(context.app.mqtt?.brokerCounters?.refusedPublishes, ids.length);
  t.is((await logs(context)).length, 0);
  t.deepEqual(topics.parseBoxTopic(`parkbench/boxes/0${moduleId}/response`), null);
  t.deepEqual(topics.parseBoxTopic('parkbench/boxes/0/response'), { moduleId: 0, name: 'response' });
  t.deepEqual(topics.parseBoxTopic('parkbench/boxes/4294967295/state'), { moduleId: 4_294_967_295, name: 'state' });
  t.is(topics.parseBoxTopic('parkbench/boxes/4294967296/state'), null);
});
