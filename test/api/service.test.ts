// createService (api/service.ts) builds the store, the services, the MQTT
// side when asked, and the HTTP app from them: without MQTT the open route
// answers 503 mqtt_unavailable; with it the open route reaches the box
// through it, and closing the app stops everything. A store given to it is
// its own: closed with it, and when it fails to start.
import test from 'ava';
import mqtt from 'mqtt';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { configWith } from '../../api/config/index.js';
import { openStore } from '../../api/db/open-store.js';
import { hashMqttPassword } from '../../api/auth/mqtt-password.js';
import { createService } from '../../api/service.js';
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

test('createService without mqtt starts no MQTT: no mqtt nor control, and the open route answers 503 mqtt_unavailable', async (t) => {
  const dir = tempDir(t);
  const service = await createService(
    configWith({ databasePath: join(dir, 'app.sqlite'), scryptLog2N: TEST_SCRYPT_LOG2_N }),
    { clock: new FakeClock() },
  );
  t.teardown(() => service.close());
  await service.app.ready();
  t.is(service.mqtt, undefined);
  t.is(service.control, undefined);
  const test = await testApp(t);
  const parking = await seedParking(test, { isOnline: true });
  const response = await openKey(test, parking.entrance.moduleId, parking.id);
  t.is(response.statusCode, 503);
  t.is(errorBody(t, response).error, 'mqtt_unavailable');
});

test('createService with mqtt: the open route reaches the box over the broker it started; closing the app stops the broker', async (t) => {
  const app = await testApp(t, {}, { mqtt: { mode: 'embedded', host: '127.0.0.1', port: 0 } });
  const url = app.mqtt?.url ?? '';
  t.regex(url, /^mqtt:\/\/127\.0\.0\.1:\d+$/);
  t.not(app.control, undefined);
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

test('a store given to createService is its own: the app reads it, and closing the service closes it', async (t) => {
  const dir = tempDir(t);
  const config = configWith({ databasePath: join(dir, 'app.sqlite'), scryptLog2N: TEST_SCRYPT_LOG2_N });
  const store = await openStore(config, { onIdleError: () => undefined });
  const service = await createService(config, { clock: new FakeClock(), store });
  t.teardown(() => service.close());
  t.is(service.ctx.store, store);
  t.is(service.mqtt, undefined);
  const health = await service.app.inject({ method: 'GET', url: '/health' });
  t.is(health.statusCode, 200, health.body);
  await service.close();
  await t.throwsAsync(store.kysely.selectFrom('secured_parkings').select('id').execute());
});

test('createService that cannot start its broker fails, and closes the store it was given', async (t) => {
  const dir = tempDir(t);
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => taken.close(() => resolve())));
  const address = taken.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const config = configWith({ databasePath: join(dir, 'app.sqlite'), scryptLog2N: TEST_SCRYPT_LOG2_N });
  const store = await openStore(config, { onIdleError: () => undefined });
  const error = await t.throwsAsync(
    createService(config, { clock: new FakeClock(), store, mqtt: { mode: 'embedded', host: '127.0.0.1', port } }),
  );
  t.regex(error.message, /already in use/);
  await t.throwsAsync(store.kysely.selectFrom('secured_parkings').select('id').execute());
});
