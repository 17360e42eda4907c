// Revocation end to end: the real API (embedded broker,
// dispatcher, ingestion) on a fake clock and real simulated boxes on MQTT.
// The REVOKE reaches every box of the key; the box answers REVOKED to that
// key and nothing else changes. A box that is offline keeps its command
// pending, through a restart of the API, and gets it when it comes online.
// 65 revocations to one box: the 65th is REVOCATION_FULL, failed and reported.
import test from 'ava';
import mqtt from 'mqtt';
import { Status } from '../../../firmware-protocol/index.js';
import { parseCommandMessage } from '../../../lib/mqtt-messages.js';
import { Topics } from '../../../lib/mqtt-topics.js';
import { boxAnswer } from '../../helpers/box-logs.js';
import { operationReport, revokeSmartKey } from '../../../api/control/operations.js';
import { parseResponse, statusName } from '../../../firmware-protocol/index.js';
import { anotherDriver, createSession } from '../../helpers/parking.js';
import { loggedIn, tempDir } from '../../helpers/api-app.js';
import {
  addParking,
  controlApp,
  dispatcherAtRest,
  pumpUntil,
  startBox,
  statesOf,
} from '../../helpers/control-bench.js';
import type { TestApp } from '../../helpers/api-app.js';
import { all, value } from '../../helpers/sql.js';

async function sessionKey(
  app: TestApp,
  parkingId: number,
  token?: string,
): Promise<{ id: number; command: Buffer; token: string }> {
  const accessToken = token ?? (await anotherDriver(app)).accessToken;
  const created = await createSession(app, accessToken, { parking_session: { secured_parking_id: parkingId } });
  const key = created.json<{ smart_key: { id: number; access_command: string } }>().smart_key;
  return { id: key.id, command: Buffer.from(key.access_command, 'base64'), token: accessToken };
}

async function statusOf(
  box: { handleCommand(command: Uint8Array): Promise<Buffer | null> },
  command: Buffer,
): Promise<string | undefined> {
  const response = await box.handleCommand(command);
  return response === null ? undefined : statusName(parseResponse(response).status);
}

test('revoke: both boxes get the REVOKE over MQTT and answer OK; then they answer REVOKED to that key and OK to another', async (t) => {
  const app = await controlApp(t);
  const parking = await addParking(app);
  const [entranceId = 0, exitId = 0] = parking.moduleIds;
  const entrance = await startBox(t, app, entranceId);
  await startBox(t, app, exitId);
  const revoked = await sessionKey(app, parking.id);
  const other = await sessionKey(app, parking.id);

  const result = await revokeSmartKey(app.ctx, revoked.id, app.clock.now(), 'test');
  await pumpUntil(
    app,
    async () => (await operationReport(app.ctx.store, result.operation)).done === 2,
    'both REVOKEs done',
  );
  const rows = await all(
    app.ctx.store,
    'SELECT module_id, last_status, control_seq, attempts FROM control_commands ORDER BY module_id',
  );
  t.deepEqual(rows, [
    { module_id: entranceId, last_status: 'OK', control_seq: 1, attempts: 1 },
    { module_id: exitId, last_status: 'OK', control_seq: 1, attempts: 1 },
  ]);
  t.is(entrance.box.state.revocations.size, 1);
  // The answers are box logs, as any other.
  t.is(await value(app.ctx.store, "SELECT count(*) FROM box_logs WHERE type = 'control' AND verified = 1"), 2);
  t.like(await app.ctx.boxes.learned(entranceId), { last_control_seq: 1, next_control_seq: 2 });

  t.is(await statusOf(entrance.box, revoked.command), 'REVOKED');
  t.is(await statusOf(entrance.box, other.command), 'OK', 'another key still opens');
});

test('an offline box keeps its REVOKE pending through an API restart and gets it when it comes online', async (t) => {
  const dir = tempDir(t);
  const first = await controlApp(t, { dir });
  const parking = await addParking(first, { boxes: ['entrance'] });
  const [moduleId = 0] = parking.moduleIds;
  const token = (await loggedIn(first)).access_token;
  const key = await sessionKey(first, parking.id, token);
  // The box was online once, then dropped off (its availability says offline).
  const running = await startBox(t, first, moduleId);
  await running.stop();
  const result = await revokeSmartKey(first.ctx, key.id, first.clock.now(), 'test');
  for (let step = 0; step < 10; step++) {
    first.clock.advance(1_000);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  t.deepEqual(await statesOf(first, result.operation), { [moduleId]: 'pending' });
  t.is(await value(first.ctx.store, 'SELECT attempts FROM control_commands'), 0, 'nothing sent to a box known offline');
  await first.app.close();

  const second = await controlApp(t, { dir });
  const box = running.box;
  t.deepEqual(await statesOf(second, result.operation), { [moduleId]: 'pending' }, 'the restart lost nothing');
  await startBox(t, second, moduleId, box);
  await pumpUntil(
    second,
    async () => (await statesOf(second, result.operation))[moduleId] === 'done',
    'the REVOKE delivered once the box is online',
  );
  t.true(box.state.revocations.has(key.id));
});

test('65 revocations to one box: 64 fit its list, the 65th is REVOCATION_FULL, failed and not retried', async (t) => {
  const app = await controlApp(t);
  const parking = await addParking(app, { boxes: ['entrance'] });
  const [moduleId = 0] = parking.moduleIds;
  const running = await startBox(t, app, moduleId);
  const first = await sessionKey(app, parking.id);
  // 64 more keys of the same session (the route gives one per session).
  const key = await app.ctx.smartKeys.findById(first.id);
  if (key === undefined || key.session_id === null) throw new Error('no key');
  const ids = [first.id];
  for (let index = 0; index < 64; index++) {
    ids.push(
      await app.ctx.smartKeys.insert(
        {
          userId: key.user_id,
          parkingId: parking.id,
          sessionId: key.session_id,
          description: 'more',
          purpose: 'session',
          moduleIds: [moduleId],
          startTime: key.start_time,
          endTime: key.end_time,
        },
        app.clock.now(),
      ),
    );
  }
  const operations: string[] = [];
  for (const id of ids) operations.push((await revokeSmartKey(app.ctx, id, app.clock.now(), 'test')).operation);
  const last = operations.at(-1) ?? '';
  await pumpUntil(
    app,
    async () => (await operationReport(app.ctx.store, last)).pending === 0,
    'every REVOKE answered',
    {
      maxSteps: 400,
    },
  );
  const reports = await Promise.all(
    operations.slice(0, 64).map((operation) => operationReport(app.ctx.store, operation)),
  );
  t.is(reports.filter((report) => report.done === 1).length, 64);
  const report = await operationReport(app.ctx.store, last);
  t.like(report, { done: 0, pending: 0, failed: 1 });
  t.like(report.deliveries[0], { state: 'failed', last_status: 'REVOCATION_FULL', attempts: 1 });
  t.regex(report.deliveries[0]?.last_error ?? '', /revocation list is full/);
  t.is(running.box.state.revocations.size, 64);
  // Not retried: more polls send nothing.
  const sent = app.control?.counters.sent;
  for (let step = 0; step < 5; step++) app.clock.advance(1_000);
  t.is(app.control?.counters.sent, sent);
});

test('a version 1 box answers the REVOKE MALFORMED without echoing it: failed at once, not sent again', async (t) => {
  const app = await controlApp(t);
  const parking = await addParking(app, { boxes: ['entrance'] });
  const [moduleId = 0] = parking.moduleIds;
  const boxKey = Buffer.from((await app.ctx.boxes.findByModuleId(moduleId))?.box_key ?? '', 'hex');
  // A box on MQTT that knows only version 1: kind and key_id 0 in its answer (docs/protocol.md, step 2).
  const topics = new Topics();
  const client = await mqtt.connectAsync(app.mqtt?.url ?? '', {
    username: `box-${moduleId}`,
    password: `pw-${moduleId}`,
    reconnectPeriod: 0,
  });
  t.teardown(() => client.endAsync(true));
  let commands = 0;
  client.on('message', (_topic, payload) => {
    commands++;
    const { message, frame } = parseCommandMessage(payload);
    const response = boxAnswer({ moduleId, direction: 'entrance', macAddress: '', boxKey }, frame, {
      status: Status.MALFORMED,
      kind: 0,
      keyId: 0,
      remaining: 0xff,
    });
    client.publish(
      topics.box(moduleId, 'response'),
      JSON.stringify({
        command: message.command,
        response: response.toString('base64'),
        received_at: new Date().toISOString(),
        via: 'mqtt',
        context: message.context ?? {},
      }),
      { qos: 1 },
      () => undefined,
    );
  });
  await client.subscribeAsync(topics.box(moduleId, 'command'), { qos: 1 });
  await client.publishAsync(topics.box(moduleId, 'availability'), 'online', { retain: true });
  const key = await sessionKey(app, parking.id);
  const result = await revokeSmartKey(app.ctx, key.id, app.clock.now(), 'test');
  await pumpUntil(
    app,
    async () => (await operationReport(app.ctx.store, result.operation)).pending === 0,
    'the REVOKE settled',
  );
  t.like((await operationReport(app.ctx.store, result.operation)).deliveries[0], {
    state: 'failed',
    last_status: 'MALFORMED',
    attempts: 1,
  });
  for (let step = 0; step < 10; step++) app.clock.advance(1_000);
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.is(commands, 1, 'sent once');
});

test('a box online but silent: the REVOKE stays pending, sent again with a growing backoff, and at once when the box is seen online again', async (t) => {
  const app = await controlApp(t);
  const parking = await addParking(app, { boxes: ['entrance'] });
  const [moduleId = 0] = parking.moduleIds;
  const topics = new Topics();
  const client = await mqtt.connectAsync(app.mqtt?.url ?? '', {
    username: `box-${moduleId}`,
    password: `pw-${moduleId}`,
    reconnectPeriod: 0,
  });
  t.teardown(() => client.endAsync(true));
  const sentAt: number[] = [];
  client.on('message', () => sentAt.push(app.clock.now()));
  await client.subscribeAsync(topics.box(moduleId, 'command'), { qos: 1 });
  await client.publishAsync(topics.box(moduleId, 'availability'), 'online', { retain: true });
  const key = await sessionKey(app, parking.id);
  const result = await revokeSmartKey(app.ctx, key.id, app.clock.now(), 'test');
  const start = app.clock.now();
  // Each step waits for what it set off: the dispatcher's reads and writes,
  // then its sends' arrival, so the fake clock times them on any database.
  for (let step = 0; step < 120; step++) {
    app.clock.advance(500);
    await dispatcherAtRest(app);
    for (let spin = 0; spin < 500 && sentAt.length < (app.control?.counters.sent ?? 0); spin++)
      await new Promise((resolve) => setTimeout(resolve, 10));
  }
  t.like((await operationReport(app.ctx.store, result.operation)).deliveries[0], {
    state: 'pending',
    last_error: 'no answer in time',
  });
  // 60 s: sends at about 0, 3, 6, 10, 17, 29, 55 s (2 s answer timeout, then 1, 2, 4, 8, 16, 32 s ± 20 %).
  t.true(sentAt.length >= 5 && sentAt.length <= 8, `${sentAt.length} sends in 60 s`);
  const gaps = sentAt.slice(1).map((at, index) => at - (sentAt[index] ?? 0));
  t.true((gaps.at(-1) ?? 0) > (gaps[0] ?? 0) * 4, `growing gaps ${gaps.join(', ')}`);
  t.true(sentAt[0] !== undefined && sentAt[0] - start <= 2_000, 'the first send on the next poll');
  // Seen online again: sent at once, whatever the backoff says.
  const before = sentAt.length;
  await client.publishAsync(topics.box(moduleId, 'availability'), 'offline', { retain: true });
  await client.publishAsync(topics.box(moduleId, 'availability'), 'online', { retain: true });
  await pumpUntil(app, () => sentAt.length > before, 'the send on coming online', { stepMs: 0, maxSteps: 50 });
  t.is(sentAt.at(-1), app.clock.now(), 'no clock step needed');
});
