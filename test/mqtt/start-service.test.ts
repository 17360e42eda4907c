// buildApp builds the HTTP app and nothing else; startService (api/server.ts)
// builds it and starts the MQTT side beside it: the open
// route reaches the box through it, and closing the app stops both.
import test from 'ava';
import mqtt from 'mqtt';
import { join } from 'node:path';
import { buildApp } from '../../api/app.js';
import { configWith } from '../../api/config.js';
import { hashMqttPassword } from '../../api/mqtt/password-hash.js';
import { startService } from '../../api/server.js';
import { FakeClock } from '../../lib/fake-clock.js';
import { parseCommandMessage } from '../../lib/mqtt-messages.js';
import { Topics } from '../../lib/mqtt-topics.js';
import { errorBody, loggedIn, tempDir, TEST_SCRYPT_LOG2_N, testApp, type TestApp } from '../helpers/api-app.js';
import { createSession, seedParking } from '../helpers/parking.js';

const topics = new Topics();

async function openKey(app: TestApp, moduleId: number, parkingId: number) {
  const token = (await loggedIn(app)).access_token;
  const session = (await createSession(app, token, { parking_session: { secured_parking_id: parkingId } })).json<{
    smart_key: { id: number };
  }>();
  return app.app.inject({
    method: 'POST',
    url: `/api/car_driver/smart_keys/${session.smart_key.id}/open`,
    headers: { authorization: `Bearer ${token}` },
    payload: { module_id: moduleId },
  });
}

test('buildApp starts no MQTT: no app.mqtt nor app.control, and the open route answers 503 mqtt_unavailable', async (t) => {
  const dir = tempDir(t);
  const app = await buildApp({
    config: configWith({ databasePath: join(dir, 'app.sqlite'), scryptLog2N: TEST_SCRYPT_LOG2_N }),
    clock: new FakeClock(),
  });
  t.teardown(() => app.close());
  await app.ready();
  t.is(app.mqtt, undefined);
  t.is(app.control, undefined);
  const test = await testApp(t);
  const parking = await seedParking(test, { isOnline: true });
  const response = await openKey(test, parking.entrance.moduleId, parking.id);
  t.is(response.statusCode, 503);
  t.is(errorBody(t, response).error, 'mqtt_unavailable');
});

test('startService: the open route reaches the box over the broker it started; closing the app stops the broker', async (t) => {
  const app = await testApp(t, {}, { mqtt: { mode: 'embedded', host: '127.0.0.1', port: 0 } });
  const url = app.app.mqtt?.url ?? '';
  t.regex(url, /^mqtt:\/\/127\.0\.0\.1:\d+$/);
  t.not(app.app.control, undefined);
  const parking = await seedParking(app, { isOnline: true });
  const box = parking.entrance;
  await app.ctx.boxes.setMqttPasswordHash(box.moduleId, hashMqttPassword('pw'));
  const client = await mqtt.connectAsync(url, { username: `box-${box.moduleId}`, password: 'pw', reconnectPeriod: 0 });
  const commands: number[] = [];
  client.on('message', (_topic, payload) => {
    const { message } = parseCommandMessage(payload);
    commands.push(box.moduleId);
    // No response frame: the API answers 502, which only a command that went out can cause.
    const answer = {
      command: message.command,
      response: Buffer.from('garbage').toString('base64'),
      received_at: new Date().toISOString(),
      via: 'mqtt',
      context: message.context ?? {},
    };
    client.publish(topics.box(box.moduleId, 'response'), JSON.stringify(answer), { qos: 1 }, () => undefined);
  });
  await client.subscribeAsync(topics.box(box.moduleId, 'command'), { qos: 1 });
  const response = await openKey(app, box.moduleId, parking.id);
  t.is(response.statusCode, 502, response.body);
  t.deepEqual(commands, [box.moduleId]);
  await client.endAsync(true);

  await app.app.close();
  const error = await t.throwsAsync(
    mqtt.connectAsync(url, {
      username: `box-${box.moduleId}`,
      password: 'pw',
      reconnectPeriod: 0,
      connectTimeout: 2_000,
    }),
  );
  t.regex(error.message, /ECONNREFUSED|closed|timeout/i);
});

test('startService without mqtt is buildApp', async (t) => {
  const dir = tempDir(t);
  const app = await startService({
    config: configWith({ databasePath: join(dir, 'app.sqlite'), scryptLog2N: TEST_SCRYPT_LOG2_N }),
    clock: new FakeClock(),
  });
  t.teardown(() => app.close());
  await app.ready();
  t.is(app.mqtt, undefined);
});
